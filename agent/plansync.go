package agent

import (
	"github.com/fido-nvim/fido/plan"
)

// PlanToolName is the name of the plan tool; compaction and /recall treat
// its results specially.
const PlanToolName = plan.ToolName

// planSync turns a synthetic update_plan exchange into the assistant call and
// its tool result, placed into the history without touching the system message.
func planSync(rc plan.RestoreCall) []Message {
	call := ToolCall{ID: rc.ID, Name: rc.Name, Arguments: rc.Arguments}
	return []Message{
		{Role: RoleAssistant, ToolCalls: []ToolCall{call}},
		ToolMessage(call, rc.Result),
	}
}

// PlanRestoreMessages restores a saved plan (session start, /recall).
func PlanRestoreMessages(p plan.Plan) []Message { return planSync(plan.RestoreCallFor(p)) }

// PlanClearedMessages tells the model the user cleared the plan.
func PlanClearedMessages(cleared plan.Plan) []Message { return planSync(plan.ClearedCall(cleared)) }
