package nvim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fido-nvim/fido/tools/secret"
)

// A key never reaches the transcript buffer, not even when the model streams
// it in pieces or the user pastes it.
func TestTranscriptRedactsKeys(t *testing.T) {
	const key = "sk-or-v1-transcript-0123456789abcdef"
	secret.Add(key)
	tr := NewTranscript(1000)
	var buf simBuffer
	tr.User("my key is " + key)
	buf.apply(t, tr.Flush())
	tr.Content("it is sk-or-v1-transcr")
	buf.apply(t, tr.Flush())
	tr.Content("ipt-0123456789abcdef, keep it safe")
	buf.apply(t, tr.Flush())
	text := strings.Join(buf.lines, "\n")
	assert.NotContains(t, text, key)
	assert.Contains(t, text, "my key is [redacted]")
	assert.Contains(t, text, "it is [redacted], keep it safe")
}
