package ask

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/text"
)

//go:embed ask_user.md
var askUserTemplate string

const (
	askMaxChoices = 3
	// AskSomethingElse is the last item of a question with choices; it opens a free-text input.
	AskSomethingElse = "Something else…"
)

// askUserTool asks the user a question, with up to three suggested answers
// and free text.
type askUserTool struct{ p tools.Prompter }

// NewAskUserTool returns ask_user; p shows the question (nil: every call fails clearly).
func NewAskUserTool(p tools.Prompter) tools.Tool {
	t := &askUserTool{p: p}
	return tools.Define(tools.Def[askUserParams]{
		Name: "ask_user", Access: tools.ParentOnly, Contract: askUserContract,
		Run: t.run, Summarize: func(p askUserParams) string { return text.Headline(p.Question, 80) },
	})
}

type askUserParams struct {
	Question string   `json:"question" jsonschema:"The question, short and self-contained."`
	Choices  []string `json:"choices,omitempty" jsonschema:"Up to {{.MaxChoices}} distinct suggested answers. The user can always type something else."`
}

var askUserContract = tools.NewContract[askUserParams](askUserTemplate, tools.Vars{"MaxChoices": askMaxChoices, "SomethingElse": AskSomethingElse},
	tools.MaxItems("choices", askMaxChoices))

// askAnswer is the model-facing result; Choice is null for free text or no answer.
type askAnswer struct {
	Answer *string `json:"answer"`
	Choice *int    `json:"choice"`
	Note   string  `json:"note,omitempty"`
}

// Validate implements tools.Validator: the question is trimmed, the
// choices are normalized (askChoices).
func (p *askUserParams) Validate() error {
	if p.Question = strings.TrimSpace(p.Question); p.Question == "" {
		return errors.New("question is required")
	}
	choices, err := askChoices(p.Choices)
	p.Choices = choices
	return err
}

func (t *askUserTool) run(ctx context.Context, _ tools.Invocation, p askUserParams) (tools.Result, error) {
	question, choices := p.Question, p.Choices
	if t.p == nil {
		return tools.ErrorResult("needs an editor to ask the user; continue with your best judgement and state your assumptions"), nil
	}
	if len(choices) > 0 {
		idx, err := tools.AskQuestion(ctx, t.p, askQuestion(question, append(choices, AskSomethingElse)), question)
		if err != nil {
			return t.failed(ctx, err)
		}
		switch {
		case idx >= 0 && idx < len(choices):
			return askResult(choices[idx], &idx), nil
		case idx != len(choices):
			return askNoAnswer(), nil
		}
	}
	text, ok, err := t.p.Input(ctx, question, "")
	if err != nil {
		return t.failed(ctx, err)
	}
	if text = strings.TrimSpace(text); !ok || text == "" {
		return askNoAnswer(), nil
	}
	return askResult(text, nil), nil
}

// askPromptRunes bounds the question's one-line prompt; a longer (or
// multi-line) question is shown whole as the detail.
const askPromptRunes = 80

// askQuestion is the question for editors that show a question's detail:
// a question, not a list to pick from (no choice is safer than another).
func askQuestion(question string, items []string) tools.Question {
	q := tools.Question{Prompt: question, Items: items, Safe: -1}
	if strings.Contains(question, "\n") || utf8.RuneCountInString(question) > askPromptRunes {
		first, _, _ := strings.Cut(question, "\n")
		q.Prompt = text.ShortenTo(strings.TrimSpace(first), askPromptRunes)
		q.Detail = question
		q.DetailFiletype = "markdown"
	}
	return q
}

// askChoices validates and normalizes the suggested answers: each on one
// line, none empty, duplicates dropped, at most three.
func askChoices(in []string) ([]string, error) {
	if len(in) > askMaxChoices {
		return nil, fmt.Errorf("at most %d choices are allowed, got %d (the user can always type another answer)", askMaxChoices, len(in))
	}
	var out []string
	seen := map[string]bool{}
	for i, c := range in {
		c = text.Collapse(c)
		if c == "" {
			return nil, fmt.Errorf("choice %d is empty", i+1)
		}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// failed turns a prompt error into the call's outcome: cancellation ends the
// call (the registry reports it), anything else is a result the model reads.
func (t *askUserTool) failed(ctx context.Context, err error) (tools.Result, error) {
	if tools.Cancelled(ctx, err) {
		return tools.Result{}, context.Canceled
	}
	return tools.ErrorResult("could not ask the user: %v", err), nil
}

func askResult(answer string, choice *int) tools.Result {
	return tools.JSONResult(askAnswer{Answer: &answer, Choice: choice}, text.Headline(answer, 60))
}

func askNoAnswer() tools.Result {
	return tools.JSONResult(askAnswer{Note: "The user closed the question without answering. Do not ask it again: " +
		"continue with your best judgement and say what you assumed, or stop and explain what you need."}, "no answer")
}
