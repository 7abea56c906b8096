package nvim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/plan"
)

// Streaming text sends transcript ops only: the status (and the plan, which
// can be large) go out only when they changed.
func TestBatchesCarryOnlyWhatChanged(t *testing.T) {
	u := newUI(func(context.Context, *Batch) error { return nil }, t.Logf, nil)
	first := u.take()
	require.NotNil(t, first)
	assert.NotNil(t, first.Status, "the first flush sends the status")

	p := &plan.Plan{Version: 1, UpdatedAt: "2025-01-01T00:00:00.000Z", Reason: "r",
		Items: []plan.Item{{ID: "a", Title: "A", Status: plan.Pending, NextAction: "n"}}}
	u.Plan(p)
	b := u.take()
	require.NotNil(t, b.PlanState)
	assert.Equal(t, p, b.PlanState.Plan)
	assert.Nil(t, b.Status, "a plan change alone does not resend the status")

	u.SetState(agent.StateStreaming)
	b = u.take()
	require.NotNil(t, b.Status)
	assert.Nil(t, b.Status.Plan, "the status never embeds the plan")
	assert.Nil(t, b.PlanState)

	for i := 0; i < 100; i++ {
		u.Content("word ")
	}
	b = u.take()
	require.NotNil(t, b.Transcript)
	assert.Nil(t, b.Status)
	assert.Nil(t, b.PlanState)
	assert.Equal(t, int64(4), b.Flushes)
	assert.Nil(t, u.take(), "nothing changed, nothing sent")

	u.Plan(nil)
	b = u.take()
	require.NotNil(t, b.PlanState, "clearing is sent explicitly")
	assert.Nil(t, b.PlanState.Plan)

	u.Subagent(&agent.SubagentStatus{AgentID: "subagent-1", Phase: "reasoning"})
	b = u.take()
	require.NotNil(t, b.Status)
	assert.Equal(t, "reasoning", b.Status.Subagent.Phase)
	require.NotNil(t, b.Activity)
}
