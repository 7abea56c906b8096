package plan

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
)

var mainInv = tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain, AgentID: "main"}, CallID: "call_1"}

func newTool(t *testing.T) (tools.Tool, *Store, string, *[]Plan) {
	t.Helper()
	s, path := openTemp(t)
	var got []Plan
	return NewUpdateTool(s, func(p Plan) { got = append(got, p) }), s, path, &got
}

func run(t *testing.T, tool tools.Tool, argsJSON string) tools.Result {
	t.Helper()
	res, err := tool.Run(context.Background(), mainInv, json.RawMessage(argsJSON))
	require.NoError(t, err)
	return res
}

const fullArgs = `{"reason":"start the feature","items":[
	{"id":"inspect","title":"Read the code","status":"done","details":"store.go and tool.go","evidence":["go test ./plan","plan/store.go:42"]},
	{"id":"implement","title":"Write the renderer","status":"in_progress","details":"wrap, never truncate","dependencies":["inspect"],"next_action":"write render.go","evidence":["render.go drafted"]},
	{"id":"verify","title":"Golden tests","status":"pending","dependencies":["implement","inspect"],"next_action":"go test -race ./plan"},
	{"id":"ask","title":"Confirm glyphs","status":"blocked","next_action":"wait for the lead"}]}`

func TestUpdateToolSpec(t *testing.T) {
	tool, _, _, _ := newTool(t)
	assert.Equal(t, "update_plan", tool.Name())
	assert.Equal(t, tools.ParentOnly, tool.Access())
	_, ok := tool.(tools.CallSummarizer)
	assert.True(t, ok)

	var schema struct {
		Type       string   `json:"type"`
		Required   []string `json:"required"`
		Properties struct {
			Reason struct{ Type string } `json:"reason"`
			Items  struct {
				Type     string `json:"type"`
				MaxItems int    `json:"maxItems"`
				Items    struct {
					Required   []string                   `json:"required"`
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"items"`
			} `json:"items"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(tool.Parameters(), &schema))
	assert.Equal(t, "object", schema.Type)
	assert.Equal(t, []string{"reason", "items"}, schema.Required)
	assert.Equal(t, "string", schema.Properties.Reason.Type)
	assert.Equal(t, MaxItems, schema.Properties.Items.MaxItems)
	assert.Equal(t, []string{"id", "title", "status"}, schema.Properties.Items.Items.Required)
	var props []string
	for k := range schema.Properties.Items.Items.Properties {
		props = append(props, k)
	}
	assert.ElementsMatch(t, []string{"id", "title", "status", "details", "dependencies", "next_action", "evidence"}, props)
	var status struct{ Enum []string }
	require.NoError(t, json.Unmarshal(schema.Properties.Items.Items.Properties["status"], &status))
	assert.Equal(t, []string{"pending", "in_progress", "blocked", "done"}, status.Enum)

	other := NewUpdateTool(nil, nil)
	assert.Equal(t, tool.Description(), other.Description(), "the description is the same bytes every time")
	assert.Equal(t, string(tool.Parameters()), string(other.Parameters()))
}

func TestUpdateToolDescription(t *testing.T) {
	d := NewUpdateTool(nil, nil).Description()
	// PLAN.md "Model-facing tool description", word for word.
	required := "Replace the workspace todo list and return its complete normalized state. The returned tool result is the model-visible source of truth for the current plan; it contains the full version, updatedAt, reason, and every item with its ID, title, status, details, dependencies, next action, and evidence. The plan is delivered in the tool result, not interpolated into the initial system prompt, so updating it does not change the cached system-prompt prefix. Use it at milestones, preserve existing IDs, and keep exactly zero or one in_progress item."
	assert.True(t, strings.HasPrefix(d, required), "the description opens with PLAN.md's required text")
	for _, want := range []string{
		"replaces the whole plan atomically",
		"latest update_plan result",
		"the saved plan stays exactly as it was",
		"not in the undo log",
		fmt.Sprintf("reason: required, at most %d characters", MaxReasonLen),
		fmt.Sprintf("items: at most %d", MaxItems),
		fmt.Sprintf("1-%d characters matching %s", MaxIDLen, idPattern.String()),
		fmt.Sprintf("title: required, at most %d characters", MaxTitleLen),
		"pending, in_progress, blocked or done. At most one item is in_progress",
		fmt.Sprintf("next_action: required for pending, in_progress and blocked items, at most %d characters", MaxNextActionLen),
		fmt.Sprintf("details: optional, at most %d characters", MaxDetailsLen),
		"no self-dependency, no cycles",
		fmt.Sprintf("evidence: optional, at most %d entries of at most %d characters each", MaxEvidence, MaxEvidenceLen),
	} {
		assert.Contains(t, d, want)
	}
}

func TestUpdateToolReturnsCompletePlan(t *testing.T) {
	tool, s, path, got := newTool(t)
	res := run(t, tool, fullArgs)
	require.False(t, res.IsError, res.Content)

	want := `{"version":1,"updatedAt":"2025-01-01T00:00:01.000Z","reason":"start the feature","items":[
		{"id":"inspect","title":"Read the code","status":"done","details":"store.go and tool.go","evidence":["go test ./plan","plan/store.go:42"]},
		{"id":"implement","title":"Write the renderer","status":"in_progress","details":"wrap, never truncate","dependencies":["inspect"],"next_action":"write render.go","evidence":["render.go drafted"]},
		{"id":"verify","title":"Golden tests","status":"pending","dependencies":["implement","inspect"],"next_action":"go test -race ./plan"},
		{"id":"ask","title":"Confirm glyphs","status":"blocked","next_action":"wait for the lead"}]}`
	assert.JSONEq(t, want, res.Content, "the result is the complete plan, every field of every item")
	assert.NotContains(t, res.Content, "…")
	assert.Equal(t, "plan v1: 1/4 done, now: implement, blocked: ask", res.Summary)
	assert.Empty(t, res.Changed, "a plan update changes no workspace file")

	require.Len(t, *got, 1)
	assert.Equal(t, ResultJSON((*got)[0]), res.Content, "the UI gets the object the model got")
	assert.Equal(t, s.Current(), &(*got)[0])
	assert.JSONEq(t, res.Content, mustRead(t, path), "disk holds the same plan")

	res2 := run(t, tool, `{"reason":"done inspecting","items":[{"id":"inspect","title":"Read the code","status":"done"}]}`)
	require.False(t, res2.IsError, res2.Content)
	assert.JSONEq(t, `{"version":2,"updatedAt":"2025-01-01T00:00:02.000Z","reason":"done inspecting","items":[{"id":"inspect","title":"Read the code","status":"done"}]}`, res2.Content)
	assert.Equal(t, "plan v2: 1/1 done", res2.Summary)
	assert.Len(t, *got, 2)
}

func TestUpdateToolRejects(t *testing.T) {
	tests := []struct {
		name, args, want string
	}{
		{"not an object", `[1]`, "update_plan: argument"},
		{"unknown argument", `{"reason":"r","items":[],"extra":1}`, `unknown argument "extra"`},
		{"unknown item field", `{"reason":"r","items":[{"id":"a","title":"t","status":"done","note":"x"}]}`, `unknown argument "note"`},
		{"wrong type", `{"reason":"r","items":[{"id":"a","title":"t","status":"done","evidence":"x"}]}`, `argument "items.evidence" must be an array`},
		{"rule broken", `{"reason":"r","items":[{"id":"verify","title":"t","status":"pending","next_action":"n","dependencies":["impl"]}]}`, `item "verify": dependency "impl" does not exist in this plan`},
		{"two in progress", `{"reason":"r","items":[{"id":"a","title":"t","status":"in_progress","next_action":"n"},{"id":"b","title":"t","status":"in_progress","next_action":"n"}]}`, `keep at most one item in_progress`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tool, s, path, got := newTool(t)
			first := run(t, tool, `{"reason":"r","items":[{"id":"a","title":"t","status":"pending","next_action":"n"}]}`)
			require.False(t, first.IsError)
			before := mustRead(t, path)

			res := run(t, tool, tc.args)
			assert.True(t, res.IsError)
			var body struct{ Error string }
			require.NoError(t, json.Unmarshal([]byte(res.Content), &body))
			assert.Contains(t, body.Error, tc.want)
			assert.Contains(t, body.Error, "the plan was not changed")
			assert.Equal(t, before, mustRead(t, path), "disk unchanged")
			assert.Equal(t, 1, s.Version(), "memory unchanged")
			assert.Equal(t, "a", s.Current().Items[0].ID)
			assert.Len(t, *got, 1, "onUpdate is not called for a rejected update")
		})
	}
}

func TestUpdateToolRejectedUpdateNamesVersion(t *testing.T) {
	tool, _, _, _ := newTool(t)
	require.False(t, run(t, tool, fullArgs).IsError)
	res := run(t, tool, `{"reason":"r","items":[{"id":"a","title":"t","status":"later"}]}`)
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "still version 1")
	assert.Contains(t, res.Content, `item \"a\": status \"later\" is not one of pending, in_progress, blocked, done`)
}

func TestUpdateToolRefusesAStaleUpdateWithTheCurrentPlan(t *testing.T) {
	tool, _, path, shown := newTool(t)
	require.False(t, run(t, tool, fullArgs).IsError)
	other, _, err := OpenStore(path) // a second Neovim on the workspace
	require.NoError(t, err)
	theirs, err := other.Update(args(item("theirs", InProgress)))
	require.NoError(t, err)

	res := run(t, tool, `{"reason":"mine","items":[{"id":"mine","title":"t","status":"pending","next_action":"n"}]}`)
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "update_plan refused, nothing was saved: another Fido session on this workspace changed the plan since version 1")
	assert.Contains(t, res.Content, ResultJSON(theirs), "the refusal carries the complete current plan")
	assert.Equal(t, theirs, readDisk(t, path))
	require.NotEmpty(t, *shown)
	assert.Equal(t, theirs, (*shown)[len(*shown)-1], "the window shows the saved plan")

	res = run(t, tool, `{"reason":"mine","items":[{"id":"theirs","title":"t","status":"done"},{"id":"mine","title":"t","status":"pending","next_action":"n"}]}`)
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, 3, readDisk(t, path).Version)
}

func TestUpdateToolCancelled(t *testing.T) {
	tool, s, _, got := newTool(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := tool.Run(ctx, mainInv, json.RawMessage(fullArgs))
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Nil(t, s.Current())
	assert.Empty(t, *got)
}

func TestUpdateToolDeniedToSubagent(t *testing.T) {
	tool, s, path, got := newTool(t)
	reg, err := tools.NewRegistry(tool)
	require.NoError(t, err)
	sub := tools.Invocation{Identity: tools.Identity{Role: tools.RoleSubagent, AgentID: "subagent-1", ParentRole: tools.RoleMain}, DelegationDepth: 1}
	res := reg.Invoke(context.Background(), sub, "update_plan", json.RawMessage(fullArgs))
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "permission_denied")
	assert.Nil(t, s.Current())
	assert.NoFileExists(t, path)
	assert.Empty(t, *got)
}

// snapshotTree records every path under root with its mode, size, mtime and content hash.
func snapshotTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum := ""
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum = fmt.Sprintf("%x", sha256.Sum256(b))
		}
		out[p] = fmt.Sprintf("%v %d %d %s", info.Mode(), info.Size(), info.ModTime().UnixNano(), sum)
		return nil
	}))
	return out
}

func TestUpdatesTouchOnlyTheStateFile(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "src", "main.go"), []byte("package main\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".gitignore"), []byte(".fido-*\n"), 0o644))
	t.Chdir(ws)
	before := snapshotTree(t, ws)

	tool, s, path, _ := newTool(t)
	reg, err := tools.NewRegistry(tool)
	require.NoError(t, err)
	for i := 0; i < 50; i++ {
		a := fmt.Sprintf(`{"reason":"step %d","items":[{"id":"a","title":"t","status":"done","evidence":["e%d"]},{"id":"b","title":"t","status":"in_progress","next_action":"n"}]}`, i, i)
		res := reg.Invoke(context.Background(), mainInv, "update_plan", json.RawMessage(a))
		require.False(t, res.IsError, res.Content)
		assert.Empty(t, res.Changed)
		bad := reg.Invoke(context.Background(), mainInv, "update_plan", json.RawMessage(`{"reason":"x","items":[{"id":"","title":"t","status":"done"}]}`))
		require.True(t, bad.IsError)
	}
	_, err = s.Clear()
	require.NoError(t, err)

	assert.Equal(t, before, snapshotTree(t, ws), "the workspace is untouched")
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"plan.json", "plan.json.lock"}, names, "the state dir holds only plan.json and its lock (no undo log, no temp files)")
	assert.Equal(t, 51, s.Version())
}

func TestSummary(t *testing.T) {
	tests := []struct {
		name string
		p    Plan
		want string
	}{
		{"in progress", Plan{Version: 3, Items: []Item{item("a", Done), item("b", Done), item("implement", InProgress), item("c", Pending), item("d", Pending)}}, "plan v3: 2/5 done, now: implement"},
		{"next pending", Plan{Version: 2, Items: []Item{item("a", Done), item("b", Pending), item("c", Pending)}}, "plan v2: 1/3 done, next: b"},
		{"blocked", Plan{Version: 4, Items: []Item{item("a", Blocked), item("b", Pending), item("c", Blocked)}}, "plan v4: 0/3 done, blocked: a, c"},
		{"all done", Plan{Version: 9, Items: []Item{item("a", Done)}}, "plan v9: 1/1 done"},
		{"cleared", ClearedPlan(5, t0), "plan v5: cleared"},
		{"empty", Plan{Version: 6, Reason: "nothing left", Items: []Item{}}, "plan v6: empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, Summary(tc.p)) })
	}
}

func TestSummarizeCall(t *testing.T) {
	cs := NewUpdateTool(nil, nil).(tools.CallSummarizer)
	assert.Equal(t, "4 items: start the feature", cs.SummarizeCall(json.RawMessage(fullArgs)))
	assert.Equal(t, "1 item: r", cs.SummarizeCall(json.RawMessage(`{"reason":"r","items":[{}]}`)))
	assert.Equal(t, "0 items", cs.SummarizeCall(json.RawMessage(`{"items":[]}`)))
	long := cs.SummarizeCall(json.RawMessage(`{"reason":"` + strings.Repeat("x", 200) + `","items":[]}`))
	assert.Equal(t, 81, len([]rune(long)))
	assert.True(t, strings.HasSuffix(long, "…"))
	assert.Equal(t, "not json", cs.SummarizeCall(json.RawMessage("not   json")))
}
