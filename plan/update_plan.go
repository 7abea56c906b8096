package plan

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/text"
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

// updateTool is the update_plan tool: it replaces the plan in a Store and
// returns the complete normalized plan as its result.
type updateTool struct {
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
//
// The plan is the parent's session state: the tool is ParentOnly.
func NewUpdateTool(store *Store, onUpdate func(Plan)) tools.Tool {
	t := &updateTool{store: store, onUpdate: onUpdate}
	return tools.Define(tools.Def[UpdateArgs]{
		Name: ToolName, Access: tools.ParentOnly, Contract: updatePlanContract,
		Run: t.run, Summarize: UpdateArgs.summary, ArgsNote: "; the plan was not changed",
	})
}

func (t *updateTool) run(ctx context.Context, _ tools.Invocation, in UpdateArgs) (tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return tools.ErrorResult("not run: %v; the plan was not changed", err), nil
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
			return tools.ErrorResult("rejected, the plan was not changed (still version %d): %v", t.store.Version(), ve), nil
		}
		return tools.ErrorResult("could not save the plan, it was not changed (still version %d): %v", t.store.Version(), err), nil
	}
	if t.onUpdate != nil {
		t.onUpdate(p.Clone())
	}
	return tools.Result{Content: ResultJSON(p), Summary: Summary(p)}, nil
}

// summary is the transcript line of a call: "5 items: <reason>".
func (in UpdateArgs) summary() string {
	s := text.Count(len(in.Items), "item", "items")
	if r := singleLine(in.Reason); r != "" {
		s += ": " + r
	}
	return text.Shorten(s, 80)
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
