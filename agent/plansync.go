package agent

import (
	"encoding/json"

	"github.com/fido-nvim/fido/plan"
)

// PlanToolName is the name of the plan tool; compaction and /recall treat
// its results specially.
const PlanToolName = "update_plan"

// PlanSyncMessages is the synthetic update_plan call and its complete result
// that put p into the model's history without touching the system message:
// used for the restore at session start and after the user clears the plan.
func PlanSyncMessages(p plan.Plan, callID string) []Message {
	if p.Items == nil {
		p.Items = []plan.Item{}
	}
	args, _ := json.Marshal(struct {
		Reason string      `json:"reason"`
		Items  []plan.Item `json:"items"`
	}{p.Reason, p.Items})
	result, _ := json.Marshal(p)
	call := ToolCall{ID: callID, Name: PlanToolName, Arguments: string(args)}
	return []Message{
		{Role: RoleAssistant, ToolCalls: []ToolCall{call}},
		ToolMessage(call, string(result)),
	}
}
