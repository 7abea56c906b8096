package ask

import (
	"context"
	_ "embed"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/fido-nvim/fido/tools"
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

// AskExpertTool is ask_an_expert: the user relays a question to a person.
type AskExpertTool struct {
	asker ExpertAsker
}

// NewAskExpertTool makes ask_an_expert; asker may be nil (then it refuses).
func NewAskExpertTool(asker ExpertAsker) *AskExpertTool { return &AskExpertTool{asker: asker} }

type askExpertParams struct {
	Question string `json:"question" jsonschema:"A self-contained question for a human expert (at most {{.MaxQuestion}} characters)."`
}

var askExpertContract = tools.NewContract[askExpertParams](strings.TrimSpace(askExpertTemplate), tools.Vars{"MaxQuestion": MaxExpertQuestion})

func (t *AskExpertTool) Name() string         { return "ask_an_expert" }
func (t *AskExpertTool) Description() string  { return askExpertContract.Description() }
func (t *AskExpertTool) Access() tools.Access { return tools.ParentOnly }
func (t *AskExpertTool) Parameters() json.RawMessage {
	return askExpertContract.Parameters()
}

// Contract implements tools.Contracted.
func (t *AskExpertTool) Contract() *tools.Contract { return askExpertContract }

func (t *AskExpertTool) SummarizeCall(args json.RawMessage) string {
	var p askExpertParams
	_ = json.Unmarshal(args, &p)
	return tools.Shorten(strings.Join(strings.Fields(p.Question), " "), 60)
}

func (t *AskExpertTool) Run(ctx context.Context, _ tools.Invocation, args json.RawMessage) (tools.Result, error) {
	var p askExpertParams
	if err := tools.DecodeArgs(args, &p); err != nil {
		return tools.ErrorResult("%v", err), nil
	}
	q := strings.TrimSpace(p.Question)
	switch {
	case q == "":
		return tools.ErrorResult("argument \"question\" is missing or empty"), nil
	case utf8.RuneCountInString(q) > MaxExpertQuestion:
		return tools.ErrorResult("the question has %d characters; at most %d", utf8.RuneCountInString(q), MaxExpertQuestion), nil
	case t.asker == nil:
		return tools.ErrorResult("ask_an_expert needs the editor to show the question; it is not available here"), nil
	}
	answer, ok, err := t.asker.AskExpert(ctx, q)
	if err != nil {
		if ctx.Err() != nil {
			return tools.ErrorResult("ask_an_expert was cancelled"), nil
		}
		return tools.ErrorResult("could not ask the user: %v", err), nil
	}
	answer = strings.TrimSpace(answer)
	if !ok || answer == "" {
		return tools.ErrorResult("the user cancelled: no expert answer; continue without it or ask the user how to proceed"), nil
	}
	res := tools.JSONResult(map[string]string{"answer": answer}, tools.Shorten(strings.Join(strings.Fields(answer), " "), 60))
	return res, nil
}
