package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/plan"
	"github.com/fido-nvim/fido/tools"
)

func turnsOf(n int) []Message {
	msgs := []Message{{Role: RoleSystem, Content: "sys"}}
	for i := 1; i <= n; i++ {
		msgs = append(msgs, Message{Role: RoleUser, Content: strings.Repeat("q", 10) + string(rune('0'+i))},
			Message{Role: RoleAssistant, Content: "a" + string(rune('0'+i))})
	}
	return msgs
}

func TestWithSummaryKeepsSystemPlanAndNewestTurns(t *testing.T) {
	p := samplePlan()
	msgs := append([]Message{{Role: RoleSystem, Content: "sys"}}, PlanRestoreMessages(p)...)
	msgs = append(msgs, turnsOf(4)[1:]...)
	out, err := WithSummary(msgs, "the summary", 2)
	require.NoError(t, err)
	require.Len(t, out, 1+2+1+4)
	assert.Equal(t, msgs[0], out[0])
	assert.Equal(t, PlanToolName, out[1].ToolCalls[0].Name)
	got, err := plan.ParseResult(out[2].Content)
	require.NoError(t, err)
	assert.Equal(t, p.Version, got.Version, "the newest full plan result is carried forward unchanged")
	assert.True(t, strings.HasPrefix(out[3].Content, summaryPrefix))
	assert.Contains(t, out[3].Content, "the summary")
	assert.Equal(t, msgs[len(msgs)-4:], out[4:], "the newest two turns as they were")

	_, err = WithSummary(turnsOf(2), "s", 2)
	assert.ErrorIs(t, err, errNothingToCompact)
}

// /compact asks with the same system message and tools, ignores a tool call
// in the reply, and the next request carries the summary.
func TestCompactCommand(t *testing.T) {
	p := &scriptProvider{}
	for i := 0; i < 3; i++ {
		p.add(answer("ok"))
	}
	summary := answer("SUMMARY-TEXT")
	summary.msg.ToolCalls = []ToolCall{{ID: "x", Name: "read_file", Arguments: "{}"}}
	p.add(summary).add(answer("after"))
	s, ui := newTestSession(t, p, SessionConfig{})
	for _, q := range []string{"one", "two", "three"} {
		s.Submit(q)
		waitIdle(t, s)
	}
	s.Submit("/compact keep the names")
	require.Eventually(t, func() bool { return ui.has("notice compacted:") }, 5*time.Second, 10*time.Millisecond)
	s.Submit("four")
	waitIdle(t, s)
	reqs := p.reqs()
	require.Len(t, reqs, 5)
	sumReq := reqs[3]
	assert.Equal(t, reqs[0].Messages[0], sumReq.Messages[0], "same system message")
	assert.Contains(t, sumReq.Messages[len(sumReq.Messages)-1].Content, "Do not call any tool")
	assert.Contains(t, sumReq.Messages[len(sumReq.Messages)-1].Content, "keep the names")
	var texts []string
	for _, m := range reqs[4].Messages {
		texts = append(texts, string(m.Role)+":"+m.Content)
	}
	assert.Equal(t, "system", texts[0][:6])
	assert.Contains(t, texts[1], "SUMMARY-TEXT")
	assert.Equal(t, []string{"user:two", "assistant:ok", "user:three", "assistant:ok", "user:four"}, texts[2:])
}

// A /compact whose summary request fails says why and leaves the
// conversation as it was; only a cancel is reported as one.
func TestCompactFailureSaysWhy(t *testing.T) {
	p := &scriptProvider{}
	for i := 0; i < 3; i++ {
		p.add(answer("ok"))
	}
	p.add(scriptReply{err: &ProviderError{Status: 500, Message: "upstream exploded"}})
	s, ui := newTestSession(t, p, SessionConfig{})
	for _, q := range []string{"one", "two", "three"} {
		s.Submit(q)
		waitIdle(t, s)
	}
	before := s.Messages()
	s.command("/compact")
	assert.True(t, ui.has("error compaction failed, the conversation is unchanged: upstream exploded"))
	assert.False(t, ui.has("notice compaction cancelled"))
	assert.Equal(t, before, s.Messages())
	assert.Equal(t, StateIdle, ui.lastState())
}

// What Fido adds to the conversation while /compact runs (a cleared plan)
// joins it when the compaction ends, so the next turn's request carries it.
func TestPlanClearedDuringCompactJoinsWhenItEnds(t *testing.T) {
	p := &scriptProvider{}
	for i := 0; i < 3; i++ {
		p.add(answer("ok"))
	}
	summary := answer("SUMMARY-TEXT")
	summary.arrived, summary.release = make(chan struct{}), make(chan struct{})
	p.add(summary).add(answer("after"))
	sp := samplePlan()
	s, ui := newTestSession(t, p, SessionConfig{Plans: &memPlans{p: &sp}})
	for _, q := range []string{"one", "two", "three"} {
		s.Submit(q)
		waitIdle(t, s)
	}
	s.Submit("/compact")
	<-summary.arrived
	s.Submit("/plan clear")
	close(summary.release)
	require.Eventually(t, func() bool { return ui.has("notice compacted:") }, 5*time.Second, 10*time.Millisecond)
	waitIdle(t, s)
	s.Submit("four")
	waitIdle(t, s)
	reqs := p.reqs()
	require.Len(t, reqs, 5)
	msgs := reqs[4].Messages
	require.GreaterOrEqual(t, len(msgs), 3)
	cleared := msgs[len(msgs)-2]
	assert.Equal(t, RoleTool, cleared.Role, "the cleared plan comes right before the next message")
	assert.Equal(t, PlanToolName, cleared.Name)
	assert.Contains(t, cleared.Content, `"items":[]`)
	assert.Equal(t, "four", msgs[len(msgs)-1].Content)
}

// Past the budget the model's summary comes first; when it fails, shrinking.
func TestAutomaticCompactionAndFallback(t *testing.T) {
	p := &scriptProvider{}
	for i := 0; i < 3; i++ {
		p.add(answer(strings.Repeat("long answer ", 40)))
	}
	p.add(answer("AUTO-SUMMARY")).add(answer("done"))
	s, ui := newTestSession(t, p, SessionConfig{ContextBudget: 200})
	for _, q := range []string{"one", "two", "three", "four"} {
		s.Submit(q)
		waitIdle(t, s)
	}
	assert.True(t, ui.has("notice the conversation passed its context budget"))
	reqs := p.reqs()
	require.Len(t, reqs, 5)
	assert.Contains(t, reqs[4].Messages[1].Content, "AUTO-SUMMARY")
	assert.Equal(t, "four", reqs[4].Messages[len(reqs[4].Messages)-1].Content)

	info := s.info()
	assert.Equal(t, 200, info.ContextLimit)
	assert.Greater(t, info.ContextUsed, 0)

	// The summary request fails: old turns are dropped instead, and it says so.
	p2 := &scriptProvider{}
	for i := 0; i < 3; i++ {
		p2.add(answer(strings.Repeat("long answer ", 40)))
	}
	p2.add(scriptReply{err: &ProviderError{Status: 500, Message: "boom"}}).add(answer("done"))
	s2, ui2 := newTestSession(t, p2, SessionConfig{ContextBudget: 200})
	for _, q := range []string{"one", "two", "three", "four"} {
		s2.Submit(q)
		waitIdle(t, s2)
	}
	assert.True(t, ui2.has("notice the summary request failed"))
	last := p2.reqs()[len(p2.reqs())-1]
	assert.NotContains(t, last.Messages[1].Content, "one")
}

// fixedCatalog is an MCP-like catalog: the same tools every time.
type fixedCatalog []tools.Tool

func (c fixedCatalog) Catalog(context.Context) ([]tools.Tool, []string) { return c, nil }

// describedTool is an echo tool with a description of its own length.
type describedTool struct {
	*echoTool
	desc string
}

func (t describedTool) Description() string { return t.desc }

// /compact asks for the summary with the conversation's own catalog (MCP
// tools included), so the request shares the cached prefix of the turns
// around it; the ctx gauge counts those tools too.
func TestCompactUsesTheConversationsCatalog(t *testing.T) {
	p := &scriptProvider{}
	for i := 0; i < 3; i++ {
		p.add(answer("ok"))
	}
	p.add(answer("SUMMARY-TEXT")).add(answer("after"))
	base, err := tools.NewRegistry(&echoTool{name: "alpha"})
	require.NoError(t, err)
	big := describedTool{&echoTool{name: "mcp__s__big"}, strings.Repeat("word ", 8000)}
	s, ui := newTestSession(t, p, SessionConfig{Registry: base, Catalog: fixedCatalog{big}})
	before := s.info().ContextUsed
	for _, q := range []string{"one", "two", "three"} {
		s.Submit(q)
		waitIdle(t, s)
	}
	assert.GreaterOrEqual(t, s.info().ContextUsed-before, 40000/4, "the gauge counts the MCP tool's 40,000-byte description")
	s.Submit("/compact")
	require.Eventually(t, func() bool { return ui.has("notice compacted:") }, 5*time.Second, 10*time.Millisecond)
	s.Submit("four")
	waitIdle(t, s)
	reqs := p.reqs()
	require.Len(t, reqs, 5)
	require.Len(t, reqs[0].Tools, 2)
	for i, r := range reqs {
		assert.Equal(t, reqs[0].Tools, r.Tools, "request %d (3 is the summary) advertises the conversation's catalog", i)
	}
}
