package agent

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func call(id, name, args string) Message {
	return Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: id, Name: name, Arguments: args}}}
}

func result(id, name, content string) Message {
	return Message{Role: RoleTool, ToolCallID: id, Name: name, Content: content}
}

func TestCompactKeepsNewestPlanResultWhole(t *testing.T) {
	p1 := `{"version":1,"updatedAt":"2025-01-01T00:00:00.000Z","reason":"r","items":[{"id":"x","title":"X","status":"pending","next_action":"n"}]}`
	p2 := `{"version":2,"updatedAt":"2025-01-02T00:00:00.000Z","reason":"r","items":[{"id":"x","title":"X","status":"done","evidence":["go test"]}]}`
	msgs := []Message{
		{Role: RoleSystem, Content: "sys"},
		call("p1", PlanToolName, `{}`), result("p1", PlanToolName, p1),
		{Role: RoleUser, Content: "go on"},
		call("p2", PlanToolName, `{}`), result("p2", PlanToolName, p2),
		call("bad", PlanToolName, `{}`), result("bad", PlanToolName, `{"error":"item \"y\": unknown status"}`),
		{Role: RoleAssistant, Content: "done"},
	}
	out := Compact(msgs)
	assert.Equal(t, p2, out[5].Content, "newest full plan state kept byte for byte")
	assert.Contains(t, out[2].Content, `"superseded":true`)
	assert.Contains(t, out[2].Content, "version 2")
	assert.Equal(t, msgs[7].Content, out[7].Content, "a failed update is not a plan state")
	assert.Equal(t, p1, msgs[2].Content, "input untouched")
	assertValidHistory(t, out)
}

func TestCompactElidesPatchesAndStaleReads(t *testing.T) {
	big := strings.Repeat("x", 500)
	patchArgs, _ := json.Marshal(map[string]any{"operations": []map[string]any{
		{"path": "a.go", "search": "old", "replace": big},
		{"path": "new.go", "content": big},
	}})
	msgs := []Message{
		{Role: RoleSystem, Content: "sys"},
		call("r1", "read_file", `{"path":"a.go"}`), result("r1", "read_file", "package a // old"),
		call("r2", "read_file", `{"path":"b.go"}`), result("r2", "read_file", "package b"),
		call("r3", "read_file", `{"path":"d/c.go"}`), result("r3", "read_file", "package c"),
		call("pt", "patch", string(patchArgs)), result("pt", "patch", `{"applied":2}`),
		call("rd", "rmdir", `{"path":"d"}`), result("rd", "rmdir", `{"removed":"d"}`),
		call("r4", "read_file", `{"path":"a.go"}`), result("r4", "read_file", "package a // new"),
	}
	out := Compact(msgs)
	assert.Contains(t, out[2].Content, `"stale":true`, "read before the patch is stale")
	assert.Equal(t, "package b", out[4].Content, "untouched file stays")
	assert.Contains(t, out[6].Content, `"stale":true`, "read under a removed dir is stale")
	assert.Equal(t, "package a // new", out[12].Content, "read after the patch stays")
	args := out[7].ToolCalls[0].Arguments
	require.True(t, json.Valid([]byte(args)))
	assert.NotContains(t, args, big)
	assert.Contains(t, args, "500 characters elided")
	assert.Contains(t, args, `"search":"old"`, "short strings stay")
	assertValidHistory(t, out)
}

func TestRecallMessagesDropsPlanCallsKeepsValidity(t *testing.T) {
	snap := []Message{
		{Role: RoleSystem, Content: "old sys"},
		{Role: RoleUser, Content: "q"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "p", Name: PlanToolName, Arguments: "{}"}, {ID: "r", Name: "read_file", Arguments: `{"path":"a"}`}}},
		result("p", PlanToolName, `{"version":1,"items":[]}`),
		result("r", "read_file", "x"),
		{Role: RoleAssistant, Content: "answer"},
	}
	out := RecallMessages(snap, "new sys", nil)
	assert.Equal(t, "new sys", out[0].Content)
	assertValidHistory(t, out)
	for _, m := range out {
		for _, c := range m.ToolCalls {
			assert.NotEqual(t, PlanToolName, c.Name)
		}
		assert.NotEqual(t, "p", m.ToolCallID)
	}
	assert.Equal(t, "answer", out[len(out)-1].Content)
}

func TestWorkspaceStateDir(t *testing.T) {
	c := Config{StateRoot: "/state"}
	a := c.WorkspaceStateDir("/home/u/My Project")
	b := c.WorkspaceStateDir("/other/My Project")
	assert.True(t, strings.HasPrefix(a, "/state/workspaces/My-Project-"))
	assert.NotEqual(t, a, b)
	assert.Equal(t, a, c.WorkspaceStateDir("/home/u/My Project/"))
}

func TestConfigFromEnvDefaults(t *testing.T) {
	env := map[string]string{"OPENROUTER_API_KEY": " k ", "FIDO_STATE_DIR": "/s"}
	c := ConfigFromEnv(func(k string) string { return env[k] })
	assert.Equal(t, "k", c.APIKey)
	assert.Equal(t, DefaultModel, c.Model)
	assert.Equal(t, DefaultBaseURL, c.BaseURL)
	assert.Equal(t, "/s", c.StateRoot)
	assert.Equal(t, DefaultIdleTimeout, c.IdleTimeout)
	assert.Empty(t, c.Warnings)
}

func TestConfigIdleTimeout(t *testing.T) {
	for _, tt := range []struct {
		env  string
		want time.Duration
		warn bool
	}{
		{"90s", 90 * time.Second, false},
		{"500ms", 500 * time.Millisecond, false},
		{"30", 30 * time.Second, false},
		{"1.5", 1500 * time.Millisecond, false},
		{"0", DefaultIdleTimeout, true},
		{"-3s", DefaultIdleTimeout, true},
		{"soon", DefaultIdleTimeout, true},
	} {
		c := ConfigFromEnv(func(k string) string {
			if k == "FIDO_IDLE_TIMEOUT" {
				return tt.env
			}
			return ""
		})
		assert.Equal(t, tt.want, c.IdleTimeout, tt.env)
		if tt.warn {
			require.Len(t, c.Warnings, 1, tt.env)
			assert.Contains(t, c.Warnings[0], "FIDO_IDLE_TIMEOUT")
		} else {
			assert.Empty(t, c.Warnings, tt.env)
		}
	}
}
