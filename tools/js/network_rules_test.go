package js

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools/permission"
	"github.com/fido-nvim/fido/tools/toolstest"
)

// javascript_execute's network access goes through the same rules: an allow
// rule runs online and a deny rule offline, neither asks.
func TestJSNetworkFollowsTheRules(t *testing.T) {
	ws, _ := toolstest.Workspace(t, nil)
	for _, tc := range []struct {
		effect permission.Effect
		online bool
	}{{permission.Allow, true}, {permission.Deny, false}} {
		rules, _ := permission.OpenStore("", []permission.Rule{{Effect: tc.effect, Command: permission.JSNetworkRule}})
		p := &jsPrompter{}
		tool := NewJSTool(ws, p).WithPermissions(rules)
		online, note, err := tool.approveNetwork(context.Background(), "c1", "fetch('http://x')")
		require.NoError(t, err)
		assert.Equal(t, tc.online, online, note)
		assert.Zero(t, p.asked(), "the rule decides; nobody is asked")
	}
}
