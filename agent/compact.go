package agent

import (
	"encoding/json"
	"fmt"
	"path"

	"github.com/fido-nvim/fido/plan"
)

// compactMinChars is the length from which old patch strings are elided.
const compactMinChars = 240

// Compact shrinks a conversation between turns without changing its meaning:
//   - older update_plan results are replaced by a pointer to the newest one,
//     which is always kept complete (the plan's source of truth);
//   - long content/search/replace strings of applied patch calls are elided;
//   - read_file results of files that a later patch, rm or rmdir changed are
//     replaced by a note to read the file again (they would mislead).
//
// It returns a new array; msgs is not modified. Every tool call keeps its result.
func Compact(msgs []Message) []Message {
	out := CloneMessages(msgs)
	calls := toolCalls(out)
	newestPlan := newestPlanResult(out, calls)
	if newestPlan >= 0 {
		latest, _ := plan.ParseResult(out[newestPlan].Content)
		for i := 0; i < newestPlan; i++ {
			m := &out[i]
			if m.Role == RoleTool && calls[m.ToolCallID].Name == PlanToolName && isPlanState(m.Content) {
				m.Content = fmt.Sprintf(`{"superseded":true,"note":"an older plan state; the newest update_plan result (version %d) below is the current plan"}`, latest.Version)
			}
		}
	}
	// Files changed after a given message index: walk backwards collecting
	// paths changed later, and mark reads of them stale.
	changedLater := map[string]bool{}
	for i := len(out) - 1; i >= 0; i-- {
		m := &out[i]
		switch m.Role {
		case RoleTool:
			c := calls[m.ToolCallID]
			if c.Name == "read_file" && !isErrorResult(m.Content) {
				if p := argPath(c.Arguments); p != "" && isChanged(changedLater, p) {
					m.Content = fmt.Sprintf(`{"stale":true,"note":"%s was changed later in this conversation; read it again before relying on its content"}`, p)
				}
			}
		case RoleAssistant:
			for j := range m.ToolCalls {
				c := &m.ToolCalls[j]
				switch c.Name {
				case "patch":
					for _, p := range patchPaths(c.Arguments) {
						changedLater[p] = true
					}
					c.Arguments = elidePatch(c.Arguments)
				case "rm", "rmdir":
					if p := argPath(c.Arguments); p != "" {
						changedLater[p] = true
						if c.Name == "rmdir" {
							markDirChanged(changedLater, p)
						}
					}
				}
			}
		}
	}
	return out
}

// markDirChanged marks everything below dir as changed (see isChanged).
func markDirChanged(set map[string]bool, dir string) {
	set[path.Clean(dir)+"/"] = true
}

// toolCalls maps every tool call id of msgs to its call.
func toolCalls(msgs []Message) map[string]ToolCall {
	calls := map[string]ToolCall{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			calls[c.ID] = c
		}
	}
	return calls
}

// newestPlanResult is the index of the newest complete update_plan result, or -1.
func newestPlanResult(msgs []Message, calls map[string]ToolCall) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleTool && calls[msgs[i].ToolCallID].Name == PlanToolName && isPlanState(msgs[i].Content) {
			return i
		}
	}
	return -1
}

func isPlanState(content string) bool {
	_, err := plan.ParseResult(content)
	return err == nil
}

func isErrorResult(content string) bool {
	var v map[string]json.RawMessage
	if json.Unmarshal([]byte(content), &v) != nil {
		return false
	}
	_, ok := v["error"]
	return ok
}

func argPath(args string) string {
	var v struct {
		Path string `json:"path"`
	}
	if json.Unmarshal([]byte(args), &v) != nil || v.Path == "" {
		return ""
	}
	return path.Clean(v.Path)
}

func patchPaths(args string) []string {
	var v struct {
		Operations []struct {
			Path string `json:"path"`
		} `json:"operations"`
	}
	if json.Unmarshal([]byte(args), &v) != nil {
		return nil
	}
	var out []string
	for _, op := range v.Operations {
		if op.Path != "" {
			out = append(out, path.Clean(op.Path))
		}
	}
	return out
}

// elidePatch replaces long strings of patch operations with a placeholder,
// keeping the JSON valid and every other field intact.
func elidePatch(args string) string {
	var v map[string]any
	if json.Unmarshal([]byte(args), &v) != nil {
		return args
	}
	ops, ok := v["operations"].([]any)
	if !ok {
		return args
	}
	changed := false
	for _, op := range ops {
		m, ok := op.(map[string]any)
		if !ok {
			continue
		}
		for _, k := range []string{"content", "search", "replace"} {
			if s, ok := m[k].(string); ok && len(s) >= compactMinChars {
				m[k] = fmt.Sprintf("[%d characters elided by compaction; this operation was already applied]", len(s))
				changed = true
			}
		}
	}
	if !changed {
		return args
	}
	b, err := json.Marshal(v)
	if err != nil {
		return args
	}
	return string(b)
}

// isChanged reports whether p, or a directory above it, was changed later.
func isChanged(set map[string]bool, p string) bool {
	if set[p] {
		return true
	}
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if set[d+"/"] {
			return true
		}
	}
	return set["./"]
}
