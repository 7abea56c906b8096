package agent

import (
	"encoding/json"
	"fmt"

	"github.com/fido-nvim/fido/plan"
)

// DefaultContextBudget is the conversation size (in estimated tokens) above
// which older parts are shrunk before the next request. Override with
// FIDO_CONTEXT_TOKENS to match the model's context window.
const DefaultContextBudget = 100_000

// keepRecentTurns is how many of the newest user turns are never shrunk.
const keepRecentTurns = 2

// elideAbove is the size (bytes) from which an old tool result is elided.
const elideAbove = 1024

// EstimateTokens is a cheap size estimate: about four bytes a token.
func EstimateTokens(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += messageBytes(m)
	}
	return n / 4
}

func messageBytes(m Message) int {
	n := len(m.Content) + len(m.Reasoning) + len(m.ReasoningDetails) + 16
	for _, c := range m.ToolCalls {
		n += len(c.Name) + len(c.Arguments) + 16
	}
	return n
}

// BudgetReport says what FitBudget did.
type BudgetReport struct {
	Before, After int // estimated tokens
	Elided        int // old tool results replaced by a note
	DroppedTurns  int // oldest whole turns removed
}

func (r BudgetReport) String() string {
	return fmt.Sprintf("the conversation was shrunk to fit the context budget (~%dk → ~%dk tokens): %d old tool results elided, %d oldest turns dropped",
		r.Before/1000, r.After/1000, r.Elided, r.DroppedTurns)
}

// FitBudget shrinks a conversation that is over budget (estimated tokens),
// in two steps, each only as far as needed: first, large tool results older
// than the newest turns are replaced by a short note (the newest plan result
// is never touched); then the oldest whole turns are dropped, keeping the
// system message, and a note says so. If the newest complete plan result is
// dropped, it is carried forward as the newest tool result, so the model's
// plan is never lost. Tool calls and results stay paired. ok is false when
// nothing needed to change.
func FitBudget(msgs []Message, budget int) ([]Message, BudgetReport, bool) {
	rep := BudgetReport{Before: EstimateTokens(msgs)}
	if budget <= 0 || rep.Before <= budget || len(msgs) < 2 {
		return msgs, rep, false
	}
	out := CloneMessages(msgs)
	// Running size in bytes, kept up to date as messages shrink, so each step
	// costs O(len(out)) rather than re-estimating the whole array.
	size := make([]int, len(out))
	total := 0
	for i, m := range out {
		size[i] = messageBytes(m)
		total += size[i]
	}
	limit := budget * 4
	turns := userTurnStarts(out)
	protectFrom := len(out)
	if len(turns) >= keepRecentTurns {
		protectFrom = turns[len(turns)-keepRecentTurns]
	} else if len(turns) > 0 {
		protectFrom = turns[0]
	}
	calls := toolCalls(out)
	newestPlan := newestPlanResult(out, calls)

	// Step 1: elide old, large tool results, oldest first.
	for i := 1; i < protectFrom && total > limit; i++ {
		m := &out[i]
		if m.Role != RoleTool || i == newestPlan || len(m.Content) <= elideAbove {
			continue
		}
		note, _ := json.Marshal(map[string]any{
			"elided": true,
			"note": fmt.Sprintf("this %s result (%d bytes) was removed to keep the conversation within the context budget; call the tool again if you need it",
				calls[m.ToolCallID].Name, len(m.Content)),
		})
		m.Content = string(note)
		total -= size[i]
		size[i] = messageBytes(*m)
		total += size[i]
		rep.Elided++
	}

	// Step 2: drop the oldest whole turns (never the newest ones).
	if total > limit && len(turns) > keepRecentTurns {
		var carried *plan.Plan
		drop := 0
		kept := total // bytes kept after dropping turns [0, drop)
		for k := 0; k < len(turns)-keepRecentTurns; k++ {
			end := turns[k+1]
			if newestPlan >= turns[k] && newestPlan < end {
				if p, err := plan.ParseResult(out[newestPlan].Content); err == nil {
					carried = &p
				}
			}
			for i := turns[k]; i < end; i++ {
				kept -= size[i]
			}
			drop = k + 1
			if kept <= limit {
				break
			}
		}
		// Messages before the first turn (the system message, a restored
		// plan) stay.
		head := append([]Message{}, out[:turns[0]]...)
		noteText := fmt.Sprintf("[Fido] %d earlier turns of this conversation were dropped to fit the context window; ask the user or re-read files if you need what they contained.", drop)
		rest := append([]Message{{Role: RoleUser, Content: noteText}}, out[turns[drop]:]...)
		if carried != nil {
			rest = append(PlanRestoreMessages(*carried), rest...)
		}
		out = append(head, rest...)
		rep.DroppedTurns = drop
	}
	if rep.Elided == 0 && rep.DroppedTurns == 0 {
		// Over budget, but nothing may be shrunk (only the newest turns):
		// nothing changed, and the transcript is not told otherwise.
		return msgs, rep, false
	}
	rep.After = EstimateTokens(out)
	return out, rep, true
}

// userTurnStarts lists the indexes of real user messages (turn starts).
func userTurnStarts(msgs []Message) []int {
	var out []int
	for i, m := range msgs {
		if m.Role == RoleUser {
			out = append(out, i)
		}
	}
	return out
}
