package main

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools/secret"
)

func TestResolveKeysRunsKeyCommandsAndScrubs(t *testing.T) {
	t.Setenv("OPENROUTER_API_KEY", "")
	t.Setenv("TAVILY_API_KEY", "tvly-from-the-environment-123")
	env := map[string]string{
		"TAVILY_API_KEY":        "tvly-from-the-environment-123",
		apiKeyCmdEnv:            `["sh", "-c", "printf 'sk-or-v1-from-cmd-0123456789\\nsecond line\\n'"]`,
		tavilyKeyCmdEnv:         `["sh", "-c", "echo never-run"]`,
		"FIDO_SOMETHING_ELSE":   "x",
		"OPENROUTER_API_KEY_XX": "",
	}
	getenv := func(k string) string { return env[k] }
	cfg := agent.ConfigFromEnv(getenv)
	problems := resolveKeys(context.Background(), &cfg, getenv)
	assert.Empty(t, problems)
	assert.Equal(t, "sk-or-v1-from-cmd-0123456789", cfg.APIKey, "the first line of the command's output")
	assert.Equal(t, "tvly-from-the-environment-123", cfg.TavilyKey, "a key in the environment wins over its command")
	_, set := os.LookupEnv("TAVILY_API_KEY")
	assert.False(t, set, "the key variables leave the process environment")
	assert.Equal(t, "a [redacted] b [redacted]", secret.Redact("a sk-or-v1-from-cmd-0123456789 b tvly-from-the-environment-123"))
}

func TestResolveKeysProblemsNeverShowOutput(t *testing.T) {
	for _, tc := range []struct{ name, spec, want string }{
		{"not a list", `pass show openrouter`, "must be a non-empty list of strings"},
		{"empty list", `[]`, "must be a non-empty list of strings"},
		{"fails", `["sh", "-c", "echo sk-or-v1-partial-output; echo gpg: decryption failed >&2; exit 2"]`, "gpg: decryption failed"},
		{"no output", `["true"]`, "printed no key"},
		{"not found", `["/nonexistent/fido-key-helper"]`, "/nonexistent/fido-key-helper"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{apiKeyCmdEnv: tc.spec}
			getenv := func(k string) string { return env[k] }
			cfg := agent.ConfigFromEnv(getenv)
			problems := resolveKeys(context.Background(), &cfg, getenv)
			require.Len(t, problems, 1)
			assert.Contains(t, problems[0], "api_key_cmd failed")
			assert.Contains(t, problems[0], tc.want)
			assert.NotContains(t, problems[0], "sk-or-v1-partial-output", "the command's output never shows")
			assert.Empty(t, cfg.APIKey)
		})
	}
}
