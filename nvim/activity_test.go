package nvim

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/fido-nvim/fido/agent"
)

func TestActivityView(t *testing.T) {
	long := strings.Repeat("word ", 40)
	tests := []struct {
		name string
		in   *agent.SubagentStatus
		want ActivityPayload
	}{
		{name: "nil hides the bar", in: nil, want: ActivityPayload{Group: "FidoSubagent"}},
		{name: "full text",
			in: &agent.SubagentStatus{AgentID: "sub-1a2b3c4d5e6f", Phase: "read_file", Detail: "plan/render.go", Elapsed: 4200 * time.Millisecond},
			want: ActivityPayload{Visible: true, Group: "FidoSubagent",
				Text: "SUBAGENT 3c4d5e6f · read_file · plan/render.go · 4.2s"}},
		{name: "empty detail is left out",
			in:   &agent.SubagentStatus{AgentID: "ab12", Phase: "starting"},
			want: ActivityPayload{Visible: true, Group: "FidoSubagent", Text: "SUBAGENT ab12 · starting · 0.0s"}},
		{name: "final status",
			in:   &agent.SubagentStatus{AgentID: "agent-xyz98765", Phase: "completed", Detail: "3 findings", Elapsed: 63 * time.Second, Done: true},
			want: ActivityPayload{Visible: true, Group: "FidoSubagent", Text: "SUBAGENT xyz98765 · completed · 3 findings · 1m03s"}},
		{name: "nested delegation",
			in:   &agent.SubagentStatus{AgentID: "a1", Phase: "nested delegation rejected", Elapsed: time.Second},
			want: ActivityPayload{Visible: true, Group: "FidoSubagent", Text: "SUBAGENT a1 · nested delegation rejected · 1.0s"}},
		{name: "detail: newlines, tabs and control characters",
			in:   &agent.SubagentStatus{AgentID: "a1", Phase: "ripgrep", Detail: "  foo\n\tbar\x1b[31m\x00 baz\u200b\r\n", Elapsed: 0},
			want: ActivityPayload{Visible: true, Group: "FidoSubagent", Text: "SUBAGENT a1 · ripgrep · foo bar[31m baz · 0.0s"}},
		{name: "id and phase are sanitized too, never truncated",
			in: &agent.SubagentStatus{AgentID: "x\ny", Phase: "re\x07viewing", Detail: long, Elapsed: 0},
			want: ActivityPayload{Visible: true, Group: "FidoSubagent",
				Text: "SUBAGENT x y · reviewing · " + strings.TrimSpace(strings.Repeat("word ", 12)) + "… · 0.0s"}},
		{name: "missing id", in: &agent.SubagentStatus{Phase: "starting"},
			want: ActivityPayload{Visible: true, Group: "FidoSubagent", Text: "SUBAGENT ? · starting · 0.0s"}},
		{name: "invalid UTF-8 dropped",
			in:   &agent.SubagentStatus{AgentID: "a1", Phase: "find_files", Detail: "a\xffb"},
			want: ActivityPayload{Visible: true, Group: "FidoSubagent", Text: "SUBAGENT a1 · find_files · ab · 0.0s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ActivityView(tt.in)
			assert.Equal(t, tt.want, got)
			assert.True(t, utf8.ValidString(got.Text))
			assert.NotContains(t, got.Text, "\n")
		})
	}
}

// The detail is bounded; the prefix and the elapsed time always survive.
func TestActivityViewBoundsOnlyTheDetail(t *testing.T) {
	id := "agent-0123456789abcdef"
	phase := "a very long phase name that is not cut"
	s := &agent.SubagentStatus{AgentID: id, Phase: phase, Detail: strings.Repeat("é", 500), Elapsed: 90 * time.Second}
	got := ActivityView(s).Text
	assert.True(t, strings.HasPrefix(got, "SUBAGENT 89abcdef · "+phase+" · "), got)
	assert.True(t, strings.HasSuffix(got, "… · 1m30s"), got)
	detail := strings.TrimSuffix(strings.TrimPrefix(got, "SUBAGENT 89abcdef · "+phase+" · "), " · 1m30s")
	assert.Equal(t, activityDetailMax, utf8.RuneCountInString(detail))
}
