package agent

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/conversation"
)

// Resuming another conversation leaves the one it leaves with its own
// cost, never the resumed one's.
func TestSwitchingConversationsKeepsEachOnesCost(t *testing.T) {
	store := conversation.NewStore(t.TempDir())
	costly := func(text string, cost float64) scriptReply {
		r := answer(text)
		r.usage.Cost = cost
		return r
	}
	p := (&scriptProvider{}).add(costly("a", 0.5)).add(costly("b", 0.2))
	s, ui := newTestSession(t, p, SessionConfig{Conversations: store})
	s.Submit("topic alpha")
	waitIdle(t, s)
	s.command("/new")
	s.Submit("topic beta")
	waitIdle(t, s)
	beta := s.ConversationID()

	ui.selectFn = func(items []string) int {
		for i, it := range items {
			if strings.HasPrefix(it, "topic alpha ·") {
				return i
			}
		}
		return -1
	}
	s.command("/sessions")
	require.NotEqual(t, beta, s.ConversationID(), "alpha was resumed")
	total, _ := s.Totals()
	assert.InDelta(t, 0.5, total.Cost, 1e-9, "the session counts alpha's cost")

	metas, _, err := store.List()
	require.NoError(t, err)
	costs := map[string]float64{}
	for _, m := range metas {
		costs[m.Title] = m.Cost
	}
	assert.InDelta(t, 0.5, costs["topic alpha"], 1e-9)
	assert.InDelta(t, 0.2, costs["topic beta"], 1e-9, "beta keeps its own cost")
}
