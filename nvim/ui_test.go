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
