package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/plan"
)

// sampleConversation builds n turns, each with a large read_file result; turn
// planAt (if ≥ 0) also updates the plan.
func sampleConversation(n, planAt int) []Message {
	msgs := []Message{{Role: RoleSystem, Content: "sys"}}
	for i := 0; i < n; i++ {
		id := fmt.Sprint("r", i)
		msgs = append(msgs,
			Message{Role: RoleUser, Content: fmt.Sprint("question ", i)},
			call(id, "read_file", `{"path":"big.go"}`),
			result(id, "read_file", strings.Repeat("x", 8000)),
		)
		if i == planAt {
			p := samplePlan()
			p.Version = 7
			msgs = append(msgs, PlanRestoreMessages(p)...)
		}
		msgs = append(msgs, Message{Role: RoleAssistant, Content: fmt.Sprint("answer ", i)})
	}
	return msgs
}

func TestFitBudgetUnderBudgetChangesNothing(t *testing.T) {
	msgs := sampleConversation(3, -1)
	out, _, changed := FitBudget(msgs, 1_000_000)
	assert.False(t, changed)
	assert.Equal(t, msgs, out)
}

func TestFitBudgetElidesOldToolResultsFirst(t *testing.T) {
	msgs := sampleConversation(6, -1) // ~12k tokens
	out, rep, changed := FitBudget(msgs, 7000)
	require.True(t, changed)
	assert.Zero(t, rep.DroppedTurns)
	assert.Greater(t, rep.Elided, 0)
	assert.LessOrEqual(t, rep.After, 7000)
	assertValidHistory(t, out)
	assert.Equal(t, len(msgs), len(out), "only contents changed")
	// The newest two turns are untouched.
	turns := userTurnStarts(out)
	for i := turns[len(turns)-2]; i < len(out); i++ {
		assert.Equal(t, msgs[i], out[i])
	}
	assert.Contains(t, out[3].Content, `"elided":true`)
	assert.Equal(t, strings.Repeat("x", 8000), msgs[3].Content, "input untouched")
}

func TestFitBudgetDropsOldestTurnsAndCarriesThePlan(t *testing.T) {
	msgs := sampleConversation(10, 1) // the plan was set in turn 1
	out, rep, changed := FitBudget(msgs, 300)
	require.True(t, changed)
	assert.Greater(t, rep.DroppedTurns, 0)
	assertValidHistory(t, out)
	assert.Equal(t, RoleSystem, out[0].Role)
	assert.Contains(t, out[len(out)-1].Content, "answer 9", "the newest turn is kept")
	// The newest plan result survives, complete.
	i := newestPlanResult(out, toolCalls(out))
	require.GreaterOrEqual(t, i, 0, "the plan is carried forward")
	var p plan.Plan
	require.NoError(t, json.Unmarshal([]byte(out[i].Content), &p))
	assert.Equal(t, 7, p.Version)
	assert.Len(t, p.Items, 2)
	joined := ""
	for _, m := range out {
		joined += m.Content + "\n"
	}
	assert.Contains(t, joined, "earlier turns of this conversation were dropped")
	assert.NotContains(t, joined, "question 0")
}

func TestSessionFitsBudgetBeforeARequest(t *testing.T) {
	p := &scriptProvider{}
	for i := 0; i < 8; i++ {
		p.add(callTools(ToolCall{ID: fmt.Sprint("c", i), Name: "echo", Arguments: fmt.Sprintf(`{"text":%q}`, strings.Repeat("y", 6000))}))
		p.add(answer("ok"))
	}
	s, ui := newTestSession(t, p, SessionConfig{Registry: newRegistry(t, &echoTool{name: "echo"}), ContextBudget: 4000})
	for i := 0; i < 8; i++ {
		s.Submit(fmt.Sprint("turn ", i))
		waitIdle(t, s)
	}
	// Past the budget a summary is asked for first; this script answers it
	// with a tool call (ignored, no summary), so Fido falls back to shrinking
	// and says so.
	assert.True(t, ui.has("notice the conversation passed its context budget"))
	assert.True(t, ui.has("notice the summary request failed"))
	reqs := p.reqs()
	first0, _ := json.Marshal(reqs[0].Messages[0])
	for _, r := range reqs {
		m0, _ := json.Marshal(r.Messages[0])
		assert.Equal(t, string(first0), string(m0), "the system message survives shrinking")
		assertValidHistory(t, r.Messages)
	}
	// Each turn adds ~3k tokens; unshrunk, the last request would carry ~24k.
	// Only the two protected turns and the current one may exceed the budget.
	last := EstimateTokens(reqs[len(reqs)-1].Messages)
	assert.Less(t, last, 12000, "requests stay bounded: %d", last)
}
