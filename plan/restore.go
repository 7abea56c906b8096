package plan

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ToolName is the name of the plan tool, in real and synthetic calls.
const ToolName = "update_plan"

// RestoreCall is a synthetic update_plan exchange for the conversation: an
// assistant tool call (ID, Name, Arguments) and the tool message answering it
// (Result, for the same ID). The session puts it right after the system
// message, so the model's source of truth for the plan is a tool result and
// the system message never contains the plan.
type RestoreCall struct {
	ID        string
	Name      string
	Arguments string
	Result    string
}

// RestoreCallFor builds the exchange that restores a saved plan (after a
// restart): the call's arguments are the plan's {reason, items}, the result is
// the complete plan JSON, exactly as update_plan returned it. The call id is
// plan_restore_v<version>.
func RestoreCallFor(p Plan) RestoreCall {
	return syntheticCall(fmt.Sprintf("plan_restore_v%d", p.Version), p)
}

// ClearedCall builds the exchange that tells the model the user cleared the
// plan; p is the state Store.Clear returned ({"version":N, ..., "reason":
// "plan cleared by the user", "items":[]}). The call id is plan_clear_v<version>.
func ClearedCall(p Plan) RestoreCall {
	return syntheticCall(fmt.Sprintf("plan_clear_v%d", p.Version), p)
}

func syntheticCall(id string, p Plan) RestoreCall {
	args, _ := json.Marshal(p.Args()) // plain strings and slices: cannot fail
	return RestoreCall{ID: id, Name: ToolName, Arguments: string(args), Result: ResultJSON(p)}
}

// ResultJSON is the model-facing content of a successful update_plan call:
// the complete plan {version, updatedAt, reason, items}.
func ResultJSON(p Plan) string {
	b, _ := json.Marshal(p.Clone()) // Clone makes items [] rather than null
	return string(b)
}

// ParseResult reads an update_plan tool message back into a plan. It fails
// for error results and anything that is not a complete valid plan, so
// compaction can tell which result is the newest full plan state.
func ParseResult(content string) (Plan, error) {
	if !strings.HasPrefix(strings.TrimSpace(content), "{") {
		return Plan{}, fmt.Errorf("plan: not a plan result")
	}
	var p Plan
	if err := decodePlan([]byte(content), &p); err != nil {
		return Plan{}, err
	}
	return p.Clone(), nil
}
