package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools/secret"
)

// leakyTool returns whatever it is told, as a command printing the
// environment or a file holding a key would.
type leakyTool struct{ out string }

func (l leakyTool) Name() string                         { return "leaky" }
func (l leakyTool) Description() string                  { return "test" }
func (l leakyTool) Access() Access                       { return ReadOnly }
func (l leakyTool) Parameters() json.RawMessage          { return json.RawMessage(`{"type":"object"}`) }
func (l leakyTool) SummarizeCall(json.RawMessage) string { return "" }
func (l leakyTool) Run(context.Context, Invocation, json.RawMessage) (Result, error) {
	return Result{Content: "env: KEY=" + l.out + "\n", Summary: "saw " + l.out}, nil
}

// The composition root hands the registry the key redaction; the contract
// itself imports no Fido package.
func TestSecretsAreRedactedFromToolResults(t *testing.T) {
	SetRedactor(secret.Redact)
	t.Cleanup(func() { SetRedactor(nil) })
	const key = "sk-or-v1-registry-leak-0123456789"
	secret.Add(key)
	secret.Add("short") // too short to be a key: never redacted
	reg, err := NewRegistry(leakyTool{out: key + " short"})
	require.NoError(t, err)
	res := reg.Invoke(context.Background(), Invocation{Identity: Identity{Role: RoleMain}}, "leaky", nil)
	assert.Equal(t, "env: KEY=[redacted] short\n", res.Content)
	assert.Equal(t, "saw [redacted] short", res.Summary)
}
