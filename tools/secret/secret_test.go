package secret

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSecretsAreRedactedFromWritersAndChildEnvironments(t *testing.T) {
	const key = "sk-or-v1-writer-leak-0123456789"
	Add(key)
	Add("short") // too short to be a key: never redacted
	assert.Equal(t, "a [redacted] short", Redact("a "+key+" short"))
	assert.Equal(t, []byte("b [redacted]"), RedactBytes([]byte("b "+key)))
	plain := []byte("nothing secret")
	assert.Same(t, &plain[0], &RedactBytes(plain)[0], "unchanged bytes are not copied")

	var buf bytes.Buffer
	_, err := RedactWriter(&buf).Write([]byte("log line with " + key + "\n"))
	require.NoError(t, err)
	assert.Equal(t, "log line with [redacted]\n", buf.String())

	env := ScrubbedEnv([]string{"PATH=/bin", "OPENROUTER_API_KEY=" + key, "TAVILY_API_KEY=t", "HOME=/h"})
	assert.Equal(t, []string{"PATH=/bin", "HOME=/h"}, env)
}

// A key containing another is replaced whole, not around the shorter one.
func TestLongerSecretsAreRedactedWhole(t *testing.T) {
	short := "tvly-short-key-0001"
	long := short + "-and-more-9999"
	Add(short)
	Add(long)
	assert.Equal(t, "x [redacted] y", Redact("x "+long+" y"))
	assert.False(t, strings.Contains(Redact(short+long), "and-more"))
}

// A cut never splits a key, whole or (at the end of the text) begun.
func TestSafeCutNeverSplitsAKey(t *testing.T) {
	const key = "sk-safecut-0123456789abcdef"
	Add(key)
	text := "before " + key + " after"
	at := len("before ")
	for i := 0; i <= len(text); i++ {
		j := SafeCut(text, i)
		assert.LessOrEqual(t, j, i)
		if i > at && i < at+len(key) {
			assert.Equal(t, at, j, "a cut inside the key moves before it")
		} else {
			assert.Equal(t, i, j, "elsewhere the cut stays")
		}
		assert.NotContains(t, Redact(text[:j])+"|"+Redact(text[j:]), key)
	}
	begun := "text sk-safecut-0123"
	assert.Equal(t, len("text "), SafeCut(begun, len(begun)-2), "the start of a key at the end stays whole")
	assert.Equal(t, 0, SafeCut(key, 5), "no cut inside a key that starts the text")
}
