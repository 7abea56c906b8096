package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
)

// /compact in a real Neovim: the summary request keeps the system message
// and the tool list byte for byte (the cache prefix), and the next request
// has the system message, the plan's newest full result, the summary and
// the two newest turns, then the new message.
func TestE2ECompactKeepsSystemPlanSummaryAndNewestTurns(t *testing.T) {
	f := startFido(t, "")
	f.makePlan(t) // turn 1: update_plan, then "Planned."
	f.srv.Enqueue(llmtest.Text("answer two"), llmtest.Text("answer three"))
	require.NoError(t, f.Command("Fido question two"))
	f.waitIdleAfter(t, 3)
	require.NoError(t, f.Command("Fido question three"))
	f.waitIdleAfter(t, 4)

	f.srv.Enqueue(llmtest.Text("SUMMARY: planned a lexer fix"))
	require.NoError(t, f.Command("Fido /compact keep the plan in mind"))
	f.waitTranscript(t, "compacted:", 15*time.Second)
	f.srv.Enqueue(llmtest.Text("answer four"))
	require.NoError(t, f.Command("Fido question four"))
	f.waitIdleAfter(t, 6)

	reqs := f.srv.Requests()
	require.Len(t, reqs, 6)
	sum, next := reqs[4], reqs[5]
	for name, r := range map[string]llmtest.Request{"summary": sum, "next": next} {
		assert.Equal(t, reqs[0].Get("messages.0").Raw, r.Get("messages.0").Raw, "%s: the same system message", name)
		assert.Equal(t, reqs[0].Get("tools").Raw, r.Get("tools").Raw, "%s: the same tools", name)
	}
	sumMsgs := sum.Get("messages").Array()
	assert.Contains(t, sumMsgs[len(sumMsgs)-1].Get("content").String(), "keep the plan in mind")

	got := roles(next)
	require.Len(t, got, 9, strings.Join(got, "\n"))
	assert.True(t, strings.HasPrefix(got[0], "system:"))
	assert.Contains(t, got[1], "update_plan", "the plan's newest full result is carried forward")
	assert.True(t, strings.HasPrefix(got[2], "tool:"), got[2])
	assert.Contains(t, got[2], "Fix tokenizing")
	assert.True(t, strings.HasPrefix(got[3], "user:[Fido] Summary of the earlier part"), got[3])
	assert.Contains(t, got[3], "SUMMARY: planned a lexer fix")
	assert.Equal(t, []string{"user:question two", "assistant:answer two", "user:question three", "assistant:answer three", "user:question four"}, got[4:])
	assert.NotContains(t, got, "user:fix the lexer", "the first turn's user message is summarized away")
}
