package ask

import (
	"context"
	_ "embed"
	"strings"
	"unicode/utf8"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/text"
)

//go:embed ask_an_expert.md
var askExpertTemplate string

// ExpertAsker shows a question for a human expert and returns the answer the
// user pasted back (ok is false when the user cancelled).
type ExpertAsker interface {
	AskExpert(ctx context.Context, question string) (answer string, ok bool, err error)
}

// MaxExpertQuestion bounds the question's length in characters.
const MaxExpertQuestion = 4000

// NewAskExpertTool makes ask_an_expert, which has the user relay a
// question to a person; asker may be nil (then it refuses).
func NewAskExpertTool(asker ExpertAsker) tools.Tool {
	return tools.Define(tools.Def[askExpertParams]{
		Name: "ask_an_expert", Access: tools.ParentOnly, Contract: askExpertContract,
		Summarize: func(p askExpertParams) string { return text.Shorten(text.Collapse(p.Question), 60) },
		Run: func(ctx context.Context, _ tools.Invocation, p askExpertParams) (tools.Result, error) {
			return askExpert(ctx, asker, p.Question)
		},
	})
}

type askExpertParams struct {
	Question string `json:"question" jsonschema:"A self-contained question for a human expert (at most {{.MaxQuestion}} characters)."`
}

var askExpertContract = tools.NewContract[askExpertParams](strings.TrimSpace(askExpertTemplate), tools.Vars{"MaxQuestion": MaxExpertQuestion})

// askExpert shows the question through asker and returns the answer.
func askExpert(ctx context.Context, asker ExpertAsker, question string) (tools.Result, error) {
	q := strings.TrimSpace(question)
	switch {
	case q == "":
		return tools.ErrorResult("argument \"question\" is missing or empty"), nil
	case utf8.RuneCountInString(q) > MaxExpertQuestion:
		return tools.ErrorResult("the question has %d characters; at most %d", utf8.RuneCountInString(q), MaxExpertQuestion), nil
	case asker == nil:
		return tools.ErrorResult("needs the editor to show the question; it is not available here"), nil
	}
	answer, ok, err := asker.AskExpert(ctx, q)
	if err != nil {
		if ctx.Err() != nil {
			return tools.ErrorResult("cancelled"), nil
		}
		return tools.ErrorResult("could not ask the user: %v", err), nil
	}
	answer = strings.TrimSpace(answer)
	if !ok || answer == "" {
		return tools.ErrorResult("the user cancelled: no expert answer; continue without it or ask the user how to proceed"), nil
	}
	res := tools.JSONResult(map[string]string{"answer": answer}, text.Shorten(text.Collapse(answer), 60))
	return res, nil
}
