package ask

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/toolstest"
)

func TestAskUser(t *testing.T) {
	for _, tc := range []struct {
		name        string
		args        map[string]any
		choose      []int
		typed       []toolstest.Input
		wantSelects []toolstest.Select
		wantInputs  []string
		want        string
		wantSummary string
	}{
		{
			name:        "picks a suggestion",
			args:        map[string]any{"question": "Which database?", "choices": []string{"SQLite", "Postgres"}},
			choose:      []int{1},
			wantSelects: []toolstest.Select{{Prompt: "Which database?", Items: []string{"SQLite", "Postgres", "Something else…"}}},
			want:        `{"answer":"Postgres","choice":1}`,
			wantSummary: "Postgres",
		},
		{
			name:        "duplicates and spacing normalized",
			args:        map[string]any{"question": "  Go on?  ", "choices": []string{" yes ", "no\nway", "yes"}},
			choose:      []int{0},
			wantSelects: []toolstest.Select{{Prompt: "Go on?", Items: []string{"yes", "no way", "Something else…"}}},
			want:        `{"answer":"yes","choice":0}`,
			wantSummary: "yes",
		},
		{
			name:        "something else opens free text",
			args:        map[string]any{"question": "Which database?", "choices": []string{"SQLite", "Postgres"}},
			choose:      []int{2},
			typed:       []toolstest.Input{{Text: "  DuckDB, embedded  ", OK: true}},
			wantSelects: []toolstest.Select{{Prompt: "Which database?", Items: []string{"SQLite", "Postgres", "Something else…"}}},
			wantInputs:  []string{"Which database?"},
			want:        `{"answer":"DuckDB, embedded","choice":null}`,
			wantSummary: "DuckDB, embedded",
		},
		{
			name:        "no choices goes straight to free text",
			args:        map[string]any{"question": "Name of the new package?"},
			typed:       []toolstest.Input{{Text: "store", OK: true}},
			wantInputs:  []string{"Name of the new package?"},
			want:        `{"answer":"store","choice":null}`,
			wantSummary: "store",
		},
		{
			name:        "empty choices list goes straight to free text",
			args:        map[string]any{"question": "Why?", "choices": []string{}},
			typed:       []toolstest.Input{{Text: "because", OK: true}},
			wantInputs:  []string{"Why?"},
			want:        `{"answer":"because","choice":null}`,
			wantSummary: "because",
		},
		{
			name:        "selection dismissed",
			args:        map[string]any{"question": "Continue?", "choices": []string{"yes"}},
			choose:      []int{-1},
			wantSelects: []toolstest.Select{{Prompt: "Continue?", Items: []string{"yes", "Something else…"}}},
			want:        `{"answer":null,"choice":null,"note":"The user closed the question without answering. Do not ask it again: continue with your best judgement and say what you assumed, or stop and explain what you need."}`,
			wantSummary: "no answer",
		},
		{
			name:        "free text dismissed",
			args:        map[string]any{"question": "Continue?", "choices": []string{"yes"}},
			choose:      []int{1},
			typed:       []toolstest.Input{{Text: "", OK: false}},
			wantSelects: []toolstest.Select{{Prompt: "Continue?", Items: []string{"yes", "Something else…"}}},
			wantInputs:  []string{"Continue?"},
			wantSummary: "no answer",
		},
		{
			name:        "blank free text is no answer",
			args:        map[string]any{"question": "Continue?"},
			typed:       []toolstest.Input{{Text: "   ", OK: true}},
			wantInputs:  []string{"Continue?"},
			wantSummary: "no answer",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := &toolstest.Prompter{Choose: tc.choose, Typed: tc.typed}
			res := toolstest.Invoke(t, context.Background(), NewAskUserTool(fp), toolstest.Main, tc.args)
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
			assert.Equal(t, tc.wantSelects, fp.Selects)
			assert.Equal(t, tc.wantInputs, fp.Inputs)
			assert.Empty(t, fp.Choose, "every scripted selection was used")
			assert.Empty(t, fp.Typed, "every scripted input was used")
		})
	}
}

func TestAskUserRefusals(t *testing.T) {
	for _, tc := range []struct {
		name     string
		prompter tools.Prompter
		inv      tools.Invocation
		args     string
		want     string
	}{
		{name: "four choices", prompter: &toolstest.Prompter{}, inv: toolstest.Main, args: `{"question": "q", "choices": ["a", "b", "c", "d"]}`, want: "at most 3 choices are allowed, got 4"},
		{name: "empty choice", prompter: &toolstest.Prompter{}, inv: toolstest.Main, args: `{"question": "q", "choices": ["a", " \n"]}`, want: "choice 2 is empty"},
		{name: "no question", prompter: &toolstest.Prompter{}, inv: toolstest.Main, args: `{"question": " ", "choices": ["a"]}`, want: "question is required"},
		{name: "unknown argument", prompter: &toolstest.Prompter{}, inv: toolstest.Main, args: `{"question": "q", "default": "a"}`, want: `unknown argument "default"`},
		{name: "choices not strings", prompter: &toolstest.Prompter{}, inv: toolstest.Main, args: `{"question": "q", "choices": [1]}`, want: "must be a string"},
		{name: "subagent", prompter: &toolstest.Prompter{}, inv: tools.Invocation{DelegationDepth: 1}, args: `{"question": "q"}`, want: "permission_denied: ask_user is not available to a subagent"},
		{name: "prompt failure", prompter: &toolstest.Prompter{Err: errors.New("no editor connection")}, inv: toolstest.Main, args: `{"question": "q", "choices": ["a"]}`, want: "could not ask the user: no editor connection"},
		{name: "input failure", prompter: &toolstest.Prompter{Err: errors.New("no editor connection")}, inv: toolstest.Main, args: `{"question": "q"}`, want: "could not ask the user: no editor connection"},
		{name: "no prompter", inv: toolstest.Main, args: `{"question": "q"}`, want: "ask_user: needs an editor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, err := tools.NewRegistry(NewAskUserTool(tc.prompter))
			require.NoError(t, err)
			res := reg.Invoke(context.Background(), tc.inv, "ask_user", json.RawMessage(tc.args))
			assert.True(t, res.IsError)
			assert.Contains(t, res.Summary, tc.want)
			if fp, ok := tc.prompter.(*toolstest.Prompter); ok && fp.Err == nil {
				assert.Empty(t, fp.Selects, "nothing was asked")
				assert.Empty(t, fp.Inputs, "nothing was asked")
			}
		})
	}
}

func TestAskUserCancelled(t *testing.T) {
	fp := &toolstest.Prompter{Hold: true, Asked: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tools.Result, 1)
	go func() {
		done <- toolstest.Invoke(t, ctx, NewAskUserTool(fp), toolstest.Main, map[string]any{"question": "q", "choices": []string{"a"}})
	}()
	<-fp.Asked
	cancel()
	res := <-done
	assert.True(t, res.IsError)
	assert.Equal(t, "ask_user was cancelled", res.Summary)
}

func TestAskUserSummarizeCall(t *testing.T) {
	tool := NewAskUserTool(nil).(tools.CallSummarizer)
	assert.Equal(t, "Which database?", tool.SummarizeCall(json.RawMessage(`{"question": "Which database?", "choices": ["a"]}`)))
	assert.Equal(t, "Pick one … (+1 lines)", tool.SummarizeCall(json.RawMessage(`{"question": "Pick one\nplease"}`)))
}

// askingPrompter is a Prompter that shows a question's detail (tools.Asker).
type askingPrompter struct {
	asked  []tools.Question
	answer int
}

func (p *askingPrompter) Select(context.Context, string, []string) (int, error) {
	return -1, errors.New("Select: the question goes through Ask")
}
func (p *askingPrompter) Input(context.Context, string, string) (string, bool, error) {
	return "", false, nil
}
func (p *askingPrompter) Ask(_ context.Context, q tools.Question) (int, error) {
	p.asked = append(p.asked, q)
	return p.answer, nil
}

// ask_user is a question, not a list to pick from: an editor that shows
// details gets it as a Question (no choice marked safer than another); a
// long or multi-line question is its detail, in full, under a one-line prompt.
func TestAskUserIsAQuestion(t *testing.T) {
	long := "The cache can live in SQLite next to the app, or in the Postgres the rest of the service uses.\nWhich one?"
	for _, tc := range []struct {
		name, question, prompt, detail string
	}{
		{"short", "Which database?", "Which database?", ""},
		{"long", long, "The cache can live in SQLite next to the app, or in the Postgres the rest of th…", long},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &askingPrompter{answer: 1}
			args, _ := json.Marshal(map[string]any{"question": tc.question, "choices": []string{"SQLite", "Postgres"}})
			res, err := NewAskUserTool(p).Run(context.Background(), tools.Invocation{}, args)
			require.NoError(t, err)
			assert.JSONEq(t, `{"answer":"Postgres","choice":1}`, res.Content)
			require.Len(t, p.asked, 1)
			q := p.asked[0]
			assert.Equal(t, tc.prompt, q.Prompt)
			assert.Equal(t, tc.detail, q.Detail)
			assert.Equal(t, []string{"SQLite", "Postgres", AskSomethingElse}, q.Items)
			assert.Equal(t, -1, q.Safe)
			assert.False(t, q.Approval)
		})
	}
}
