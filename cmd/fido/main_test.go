package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersionAndDoctorNeverPrintKeys(t *testing.T) {
	t.Setenv("OPENROUTER_API_KEY", "sk-or-v1-doctor-secret")
	t.Setenv("TAVILY_API_KEY", "")
	t.Setenv("FIDO_MODEL", "some/model")
	t.Setenv("FIDO_STATE_DIR", t.TempDir())
	var out, errOut bytes.Buffer
	assert.Equal(t, 0, run([]string{"version"}, &out, &errOut))
	assert.Contains(t, out.String(), "fido ")

	out.Reset()
	assert.Equal(t, 0, run([]string{"doctor", "--root", t.TempDir()}, &out, &errOut))
	s := out.String()
	assert.Contains(t, s, "model:              some/model")
	assert.Contains(t, s, "OPENROUTER_API_KEY: set")
	assert.Contains(t, s, "TAVILY_API_KEY:     not set")
	assert.Contains(t, s, "workspace state:")
	assert.NotContains(t, s, "doctor-secret")
}

func TestUnknownCommandAndBadRoot(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run([]string{"frobnicate"}, &out, &errOut))
	assert.Contains(t, errOut.String(), `unknown command "frobnicate"`)
	out.Reset()
	assert.Equal(t, 2, run([]string{"doctor", "--root", "/nonexistent/dir"}, &out, &errOut))
	assert.Contains(t, out.String(), "is not a directory")
}

// The host collects garbage at its own target unless the user set GOGC.
func TestGCPercentUnlessGOGCIsSet(t *testing.T) {
	p, ok := gcPercent(func(string) string { return "" })
	assert.True(t, ok)
	assert.Equal(t, hostGCPercent, p)
	assert.Greater(t, p, 100, "above Go's default")
	_, ok = gcPercent(func(k string) string {
		if k == "GOGC" {
			return "50"
		}
		return ""
	})
	assert.False(t, ok, "the user's GOGC stands")
}
