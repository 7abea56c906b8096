package tools

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAskUser(t *testing.T) {
	for _, tc := range []struct {
		name        string
		args        map[string]any
		choose      []int
		typed       []scriptedInput
		wantSelects []scriptedSelect
		wantInputs  []string
		want        string
		wantSummary string
	}{
		{
			name:        "picks a suggestion",
			args:        map[string]any{"question": "Which database?", "choices": []string{"SQLite", "Postgres"}},
			choose:      []int{1},
			wantSelects: []scriptedSelect{{"Which database?", []string{"SQLite", "Postgres", "Something else…"}}},
			want:        `{"answer":"Postgres","choice":1}`,
			wantSummary: "Postgres",
		},
		{
			name:        "duplicates and spacing normalized",
			args:        map[string]any{"question": "  Go on?  ", "choices": []string{" yes ", "no\nway", "yes"}},
			choose:      []int{0},
			wantSelects: []scriptedSelect{{"Go on?", []string{"yes", "no way", "Something else…"}}},
			want:        `{"answer":"yes","choice":0}`,
			wantSummary: "yes",
		},
		{
			name:        "something else opens free text",
			args:        map[string]any{"question": "Which database?", "choices": []string{"SQLite", "Postgres"}},
			choose:      []int{2},
			typed:       []scriptedInput{{"  DuckDB, embedded  ", true}},
			wantSelects: []scriptedSelect{{"Which database?", []string{"SQLite", "Postgres", "Something else…"}}},
			wantInputs:  []string{"Which database?"},
			want:        `{"answer":"DuckDB, embedded","choice":null}`,
			wantSummary: "DuckDB, embedded",
		},
		{
			name:        "no choices goes straight to free text",
			args:        map[string]any{"question": "Name of the new package?"},
			typed:       []scriptedInput{{"store", true}},
			wantInputs:  []string{"Name of the new package?"},
			want:        `{"answer":"store","choice":null}`,
			wantSummary: "store",
		},
		{
			name:        "empty choices list goes straight to free text",
			args:        map[string]any{"question": "Why?", "choices": []string{}},
			typed:       []scriptedInput{{"because", true}},
			wantInputs:  []string{"Why?"},
			want:        `{"answer":"because","choice":null}`,
			wantSummary: "because",
		},
		{
			name:        "selection dismissed",
			args:        map[string]any{"question": "Continue?", "choices": []string{"yes"}},
			choose:      []int{-1},
			wantSelects: []scriptedSelect{{"Continue?", []string{"yes", "Something else…"}}},
			want:        `{"answer":null,"choice":null,"note":"The user closed the question without answering. Do not ask it again: continue with your best judgement and say what you assumed, or stop and explain what you need."}`,
			wantSummary: "no answer",
		},
		{
			name:        "free text dismissed",
			args:        map[string]any{"question": "Continue?", "choices": []string{"yes"}},
			choose:      []int{1},
			typed:       []scriptedInput{{"", false}},
			wantSelects: []scriptedSelect{{"Continue?", []string{"yes", "Something else…"}}},
			wantInputs:  []string{"Continue?"},
			wantSummary: "no answer",
		},
		{
			name:        "blank free text is no answer",
			args:        map[string]any{"question": "Continue?"},
			typed:       []scriptedInput{{"   ", true}},
			wantInputs:  []string{"Continue?"},
			wantSummary: "no answer",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := &scriptPrompter{choose: tc.choose, typed: tc.typed}
			res := invokeTool(t, context.Background(), NewAskUserTool(fp), invMain, tc.args)
			require.False(t, res.IsError, res.Content)
			if tc.want != "" {
				assert.JSONEq(t, tc.want, res.Content)
			}
			if tc.wantSummary == "no answer" {
				var got map[string]any
				require.NoError(t, json.Unmarshal([]byte(res.Content), &got))
				assert.Nil(t, got["answer"])
				assert.Contains(t, got["note"], "without answering")
			}
			assert.Equal(t, tc.wantSummary, res.Summary)
			assert.Equal(t, tc.wantSelects, fp.selects)
			assert.Equal(t, tc.wantInputs, fp.inputs)
			assert.Empty(t, fp.choose, "every scripted selection was used")
			assert.Empty(t, fp.typed, "every scripted input was used")
		})
	}
}

func TestAskUserRefusals(t *testing.T) {
	for _, tc := range []struct {
		name     string
		prompter Prompter
		inv      Invocation
		args     string
		want     string
	}{
		{name: "four choices", prompter: &scriptPrompter{}, inv: invMain, args: `{"question": "q", "choices": ["a", "b", "c", "d"]}`, want: "at most 3 choices are allowed, got 4"},
		{name: "empty choice", prompter: &scriptPrompter{}, inv: invMain, args: `{"question": "q", "choices": ["a", " \n"]}`, want: "choice 2 is empty"},
		{name: "no question", prompter: &scriptPrompter{}, inv: invMain, args: `{"question": " ", "choices": ["a"]}`, want: "question is required"},
		{name: "unknown argument", prompter: &scriptPrompter{}, inv: invMain, args: `{"question": "q", "default": "a"}`, want: `unknown argument "default"`},
		{name: "choices not strings", prompter: &scriptPrompter{}, inv: invMain, args: `{"question": "q", "choices": [1]}`, want: "must be a string"},
		{name: "subagent", prompter: &scriptPrompter{}, inv: Invocation{DelegationDepth: 1}, args: `{"question": "q"}`, want: "permission_denied: ask_user is not available to a subagent"},
		{name: "prompt failure", prompter: &scriptPrompter{err: errors.New("no editor connection")}, inv: invMain, args: `{"question": "q", "choices": ["a"]}`, want: "could not ask the user: no editor connection"},
		{name: "input failure", prompter: &scriptPrompter{err: errors.New("no editor connection")}, inv: invMain, args: `{"question": "q"}`, want: "could not ask the user: no editor connection"},
		{name: "no prompter", inv: invMain, args: `{"question": "q"}`, want: "ask_user needs an editor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, err := NewRegistry(NewAskUserTool(tc.prompter))
			require.NoError(t, err)
			res := reg.Invoke(context.Background(), tc.inv, "ask_user", json.RawMessage(tc.args))
			assert.True(t, res.IsError)
			assert.Contains(t, res.Summary, tc.want)
			if fp, ok := tc.prompter.(*scriptPrompter); ok && fp.err == nil {
				assert.Empty(t, fp.selects, "nothing was asked")
				assert.Empty(t, fp.inputs, "nothing was asked")
			}
		})
	}
}

func TestAskUserCancelled(t *testing.T) {
	fp := &scriptPrompter{hold: true, asked: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	go func() {
		done <- invokeTool(t, ctx, NewAskUserTool(fp), invMain, map[string]any{"question": "q", "choices": []string{"a"}})
	}()
	<-fp.asked
	cancel()
	res := <-done
	assert.True(t, res.IsError)
	assert.Equal(t, "ask_user was cancelled", res.Summary)
}

func TestAskUserSummarizeCall(t *testing.T) {
	tool := NewAskUserTool(nil)
	assert.Equal(t, "Which database?", tool.SummarizeCall(json.RawMessage(`{"question": "Which database?", "choices": ["a"]}`)))
	assert.Equal(t, "Pick one … (+1 lines)", tool.SummarizeCall(json.RawMessage(`{"question": "Pick one\nplease"}`)))
}
