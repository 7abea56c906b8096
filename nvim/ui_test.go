package nvim

import (
	"bytes"
	"context"
	"testing"

	"github.com/neovim/go-client/msgpack"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/plan"
)

// Streaming text sends transcript ops only: the status (and the plan, which
// can be large) go out only when they changed.
func TestBatchesCarryOnlyWhatChanged(t *testing.T) {
	u := newUI(func(context.Context, *Batch) error { return nil }, t.Logf, nil)
	first, _ := u.take()
	require.NotNil(t, first)
	assert.NotNil(t, first.Status, "the first flush sends the status")

	p := &plan.Plan{Version: 1, UpdatedAt: "2025-01-01T00:00:00.000Z", Reason: "r",
		Items: []plan.Item{{ID: "a", Title: "A", Status: plan.Pending, NextAction: "n"}}}
	u.Plan(p)
	b, _ := u.take()
	require.NotNil(t, b.PlanState)
	assert.Equal(t, p, b.PlanState.Plan)
	assert.Nil(t, b.Status, "a plan change alone does not resend the status")

	u.SetState(agent.StateStreaming)
	b, _ = u.take()
	require.NotNil(t, b.Status)
	assert.Nil(t, b.Status.Plan, "the status never embeds the plan")
	assert.Nil(t, b.PlanState)

	for i := 0; i < 100; i++ {
		u.Content("word ")
	}
	b, _ = u.take()
	require.NotNil(t, b.Transcript)
	assert.Nil(t, b.Status)
	assert.Nil(t, b.PlanState)
	assert.Equal(t, int64(4), b.Flushes)
	b, _ = u.take()
	assert.Nil(t, b, "nothing changed, nothing sent")

	u.Plan(nil)
	b, _ = u.take()
	require.NotNil(t, b.PlanState, "clearing is sent explicitly")
	assert.Nil(t, b.PlanState.Plan)

	u.Subagent(&agent.SubagentStatus{AgentID: "subagent-1", Phase: "reasoning"})
	b, _ = u.take()
	require.NotNil(t, b.Status)
	assert.Equal(t, "reasoning", b.Status.Subagent.Phase)
	require.NotNil(t, b.Activity)
}

// BenchmarkUIStream is the host's side of a 20,000-delta answer (a newline
// every 16th) without the provider and without Neovim: each delta through
// UI.Content, a batch every 6 deltas (190 deltas/s at FlushInterval)
// msgpack-encoded as ExecLua sends it.
func BenchmarkUIStream(b *testing.B) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		u := newUI(nil, nil, nil)
		u.SetState(agent.StateStreaming)
		u.UserText("stream")
		for j := 0; j < 20000; j++ {
			if j%16 == 15 {
				u.Content("word\n")
			} else {
				u.Content("word ")
			}
			if j%6 == 5 {
				buf.Reset()
				batch, _ := u.take()
				if err := enc.Encode([]any{`return require("fido.bridge").apply(...)`, []any{batch}}); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// A turn that ends between two flushes still ends once: FidoTurnDone is
// recorded when the state goes back to idle, not inferred from the status
// Lua receives (which never showed the turn busy here). Two plan updates
// in one flush are two FidoPlanUpdated, in order.
func TestEventsAreRecordedOncePerOccurrence(t *testing.T) {
	u := newUI(func(context.Context, *Batch) error { return nil }, t.Logf, nil)
	u.take()
	u.Usage(agent.Usage{Calls: 1}, agent.Usage{})
	u.SetState(agent.StateConnecting)
	u.SetState(agent.StateStreaming)
	u.Plan(&plan.Plan{Version: 1})
	u.Plan(&plan.Plan{Version: 2})
	u.SetState(agent.StateIdle)
	u.SetState(agent.StateIdle) // a restored conversation's replay: no turn
	b, more := u.take()
	require.False(t, more)
	require.NotNil(t, b.Status)
	assert.Equal(t, "idle", b.Status.State)
	var names []string
	for _, e := range b.Events {
		names = append(names, e.Name)
	}
	assert.Equal(t, []string{EventPlanUpdated, EventPlanUpdated, EventTurnDone}, names)
	assert.Equal(t, 1, b.Events[0].Data.(PlanState).Plan.Version)
	assert.Equal(t, 2, b.Events[1].Data.(PlanState).Plan.Version)
	assert.Equal(t, 1, b.Events[2].Data.(TurnDoneData).Usage.Calls)
	b, _ = u.take()
	assert.Nil(t, b, "sent once")
}

// While the transcript takes several bounded batches, the status, the plan
// and the events wait for the one that completes it: status() never says
// idle, nor FidoTurnDone fires, before the turn's text is in the buffer.
func TestBoundedBatchesKeepEventsAfterTheText(t *testing.T) {
	u := newUI(func(context.Context, *Batch) error { return nil }, t.Logf, nil)
	u.limit = Limit{Bytes: 1000, Lines: 10}
	u.take()
	u.SetState(agent.StateStreaming)
	u.UserText("q")
	for i := 0; i < 500; i++ {
		u.Content("word ")
		if i%50 == 49 {
			u.Content("\n")
		}
	}
	u.Plan(&plan.Plan{Version: 1})
	u.SetState(agent.StateIdle)
	var batches []*Batch
	for {
		b, more := u.take()
		require.NotNil(t, b)
		batches = append(batches, b)
		bytes, lines := opsSize(*b.Transcript)
		assert.LessOrEqual(t, bytes, 1000)
		assert.LessOrEqual(t, lines, 10)
		if !more {
			break
		}
		assert.Nil(t, b.Status, "batch %d", len(batches))
		assert.Nil(t, b.PlanState)
		assert.Empty(t, b.Events)
	}
	require.Greater(t, len(batches), 2)
	last := batches[len(batches)-1]
	require.NotNil(t, last.Status)
	assert.Equal(t, "idle", last.Status.State)
	require.NotNil(t, last.PlanState)
	require.Len(t, last.Events, 2)
	assert.Equal(t, EventTurnDone, last.Events[1].Name)
	for i, b := range batches {
		assert.Equal(t, int64(i+2), b.Flushes, "numbered in order")
	}
}
