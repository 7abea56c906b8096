package shell

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/toolstest"
)

// askingPrompter records Ask calls; Select must not be used when Ask exists.
type askingPrompter struct {
	asked  []tools.Question
	answer int
}

func (a *askingPrompter) Select(context.Context, string, []string) (int, error) {
	panic("Select called on an Asker")
}
func (a *askingPrompter) Input(context.Context, string, string) (string, bool, error) {
	return "", false, nil
}
func (a *askingPrompter) Ask(_ context.Context, q tools.Question) (int, error) {
	a.asked = append(a.asked, q)
	return a.answer, nil
}

// An editor that shows details gets the whole command, its cwd, timeout and
// sandbox state, a one-line prompt and Deny as the safe choice.
func TestBashApprovalAsksWithTheWholeCommand(t *testing.T) {
	ws, _ := toolstest.Workspace(t, nil)
	p := &askingPrompter{answer: 0}
	tool := NewBashTool(ws, p)
	cmd := "echo one\necho two\necho three"
	res, err := tool.Run(context.Background(), tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain}, CallID: "call_9"}, json.RawMessage(`{"command":"echo one\necho two\necho three","timeout":7}`))
	require.NoError(t, err)
	assert.True(t, res.IsError, "Deny runs nothing")
	require.Len(t, p.asked, 1)
	q := p.asked[0]
	assert.Equal(t, "Run this command? (3 lines, shown above)", q.Prompt)
	assert.Equal(t, cmd, q.Detail)
	assert.Equal(t, "sh", q.DetailFiletype)
	assert.Equal(t, BashDeny, q.Items[q.Safe])
	assert.True(t, q.Approval)
	assert.Equal(t, "call_9", q.CallID)
	assert.Contains(t, q.DetailInfo, "timeout 7s")
	assert.Contains(t, q.DetailInfo, "bash_exec in "+ws.Root)
	assert.Equal(t, tools.NotSandboxed, q.Sandbox, "the host says how confined it runs")
}
