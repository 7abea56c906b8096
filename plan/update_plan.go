package plan

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/fido-nvim/fido/tools"
)

//go:embed update_plan.md
var updatePlanTemplate string

// updatePlanContract is the update_plan schema, generated from UpdateArgs
// and Item, and its description, both stating the bounds of normalize.go.
var updatePlanContract = tools.NewContract[UpdateArgs](strings.TrimSpace(updatePlanTemplate), tools.Vars{
	"MaxItems": MaxItems, "MaxIDLen": MaxIDLen, "IDPattern": idPattern.String(), "MaxReasonLen": MaxReasonLen,
	"MaxTitleLen": MaxTitleLen, "MaxDetailsLen": MaxDetailsLen, "MaxNextActionLen": MaxNextActionLen,
	"MaxEvidence": MaxEvidence, "MaxEvidenceLen": MaxEvidenceLen,
}, tools.MaxItems("items", MaxItems), tools.Enum("items.status", Pending, InProgress, Blocked, Done),
	tools.MaxItems("items.evidence", MaxEvidence))

// UpdateTool is the update_plan tool: it replaces the plan in a Store and
// returns the complete normalized plan as its result.
type UpdateTool struct {
	store    *Store
	onUpdate func(Plan)
	// mu keeps store updates and onUpdate calls in the same order.
	mu sync.Mutex
}

// NewUpdateTool returns the update_plan tool. onUpdate (may be nil) receives
// every successfully saved plan, the same object the model receives, e.g. to
// refresh the plan window; it is not called for a rejected update, but it is
// for a stale one (with the plan another session saved, which the model then
// receives too).
func NewUpdateTool(store *Store, onUpdate func(Plan)) tools.Tool {
	return &UpdateTool{store: store, onUpdate: onUpdate}
}

var (
	_ tools.Tool           = (*UpdateTool)(nil)
	_ tools.CallSummarizer = (*UpdateTool)(nil)
	_ tools.Contracted     = (*UpdateTool)(nil)
)

// Name implements tools.Tool.
func (t *UpdateTool) Name() string { return ToolName }

// Description implements tools.Tool.
func (t *UpdateTool) Description() string { return updatePlanContract.Description() }

// Parameters implements tools.Tool.
func (t *UpdateTool) Parameters() json.RawMessage { return updatePlanContract.Parameters() }

// Contract implements tools.Contracted.
func (t *UpdateTool) Contract() *tools.Contract { return updatePlanContract }

// Access implements tools.Tool: the plan is the parent's session state.
func (t *UpdateTool) Access() tools.Access { return tools.ParentOnly }

// Run implements tools.Tool.
func (t *UpdateTool) Run(ctx context.Context, inv tools.Invocation, args json.RawMessage) (tools.Result, error) {
	var in UpdateArgs
	if err := tools.DecodeArgs(args, &in); err != nil {
		return tools.ErrorResult("update_plan: %v; the plan was not changed", err), nil
	}
	if err := ctx.Err(); err != nil {
		return tools.ErrorResult("update_plan was not run: %v; the plan was not changed", err), nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p, err := t.store.Update(in)
	if err != nil {
		var ve *ValidationError
		var stale *StaleError
		if errors.As(err, &stale) {
			// The window shows what is saved, as the model now sees it.
			if t.onUpdate != nil {
				t.onUpdate(stale.Current.Clone())
			}
			return tools.Result{
				Content: fmt.Sprintf("update_plan refused, nothing was saved: another Fido session on this workspace changed the plan since version %d, the one your update was based on. This is the current plan (version %d); send your update again based on it, keeping what the other session added if it still applies:\n%s",
					stale.Base, stale.Current.Version, ResultJSON(stale.Current)),
				IsError: true,
				Summary: fmt.Sprintf("refused: the plan changed elsewhere (now v%d)", stale.Current.Version),
			}, nil
		}
		if errors.As(err, &ve) {
			return tools.ErrorResult("update_plan rejected, the plan was not changed (still version %d): %v", t.store.Version(), ve), nil
		}
		return tools.ErrorResult("update_plan could not save the plan, it was not changed (still version %d): %v", t.store.Version(), err), nil
	}
	if t.onUpdate != nil {
		t.onUpdate(p.Clone())
	}
	return tools.Result{Content: ResultJSON(p), Summary: Summary(p)}, nil
}

// SummarizeCall implements tools.CallSummarizer: "5 items: <reason>".
func (t *UpdateTool) SummarizeCall(args json.RawMessage) string {
	var in struct {
		Reason string            `json:"reason"`
		Items  []json.RawMessage `json:"items"`
	}
	if err := json.NewDecoder(bytes.NewReader(args)).Decode(&in); err != nil {
		return tools.Shorten(strings.Join(strings.Fields(string(args)), " "), 80)
	}
	s := fmt.Sprintf("%d items", len(in.Items))
	if len(in.Items) == 1 {
		s = "1 item"
	}
	if r := singleLine(in.Reason); r != "" {
		s += ": " + r
	}
	return tools.Shorten(s, 80)
}

// Summary is the concise transcript line for a plan, never the plan itself:
// "plan v3: 2/5 done, now: implement".
func Summary(p Plan) string {
	done, total := p.Progress()
	if total == 0 {
		if p.Reason == ClearedReason {
			return fmt.Sprintf("plan v%d: cleared", p.Version)
		}
		return fmt.Sprintf("plan v%d: empty", p.Version)
	}
	parts := []string{fmt.Sprintf("plan v%d: %d/%d done", p.Version, done, total)}
	var blocked []string
	next := ""
	for _, it := range p.Items {
		switch it.Status {
		case Blocked:
			blocked = append(blocked, it.ID)
		case Pending:
			if next == "" {
				next = it.ID
			}
		}
	}
	if a, ok := p.Active(); ok {
		parts = append(parts, "now: "+a.ID)
	} else if next != "" && len(blocked) == 0 {
		parts = append(parts, "next: "+next)
	}
	if len(blocked) > 0 {
		parts = append(parts, "blocked: "+strings.Join(blocked, ", "))
	}
	return strings.Join(parts, ", ")
}
