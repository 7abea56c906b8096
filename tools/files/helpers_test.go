package files

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/workspace"
)

// run invokes a tool through a registry, as the agent does.
func run(t testing.TB, ws *workspace.Workspace, name string, args any) tools.Result {
	t.Helper()
	reg, err := tools.NewRegistry(Tools(ws)...)
	require.NoError(t, err)
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	default:
		b, err := json.Marshal(a)
		require.NoError(t, err)
		raw = b
	}
	return reg.Invoke(context.Background(), tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain}}, name, raw)
}
