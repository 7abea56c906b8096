package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fido-nvim/fido/plan"
)

// Compaction the model writes: /compact, and automatically when the
// conversation passes its budget. The summary request carries the same
// system message and tool list as every other request (the provider's cache
// prefix is kept); the model is asked for text only, and a tool call in its
// reply is ignored. Everything between the system message and the newest
// keepRecentTurns turns is replaced by one summary message; the newest full
// plan result is carried forward unchanged (PLAN.md), and the full history
// stays in the saved conversation.
// summaryPrefix starts the summary message so the model (and the user
// reading the saved conversation) knows what it is.
const summaryPrefix = "[Fido] Summary of the earlier part of this conversation (it was compacted to fit the context window; re-read files before relying on details):\n\n"

// compactPrompt asks for the summary.
const compactPrompt = `Summarize the conversation so far for your own later use; it will replace the earlier messages. Do not call any tool: answer with text only.
Keep: the user's goals and requests in their words, decisions made and why, files read or changed (paths, what changed), commands run and their outcomes, errors met and how they were solved, what is left to do, and anything the user asked you to remember. Be concise and concrete; use short Markdown lists.`

// errNothingToCompact: the conversation has no turns older than the kept ones.
var errNothingToCompact = errors.New("nothing to compact yet: the conversation has only its newest turns")

// WithSummary replaces everything between the system message and the
// newest keep turns with one summary message, carrying the newest complete
// plan result forward when it lies in the replaced part.
func WithSummary(msgs []Message, summary string, keep int) ([]Message, error) {
	turns := userTurnStarts(msgs)
	if len(msgs) == 0 || msgs[0].Role != RoleSystem || len(turns) <= keep {
		return nil, errNothingToCompact
	}
	from := turns[len(turns)-keep]
	out := []Message{msgs[0].Clone()}
	calls := toolCalls(msgs)
	if i := newestPlanResult(msgs, calls); i >= 0 && i < from {
		if p, err := plan.ParseResult(msgs[i].Content); err == nil {
			out = append(out, PlanRestoreMessages(p)...)
		}
	}
	out = append(out, Message{Role: RoleUser, Content: summaryPrefix + strings.TrimSpace(summary)})
	// The summary stands in for a user turn; the kept turns follow as they were.
	return append(out, CloneMessages(msgs[from:])...), nil
}

// summarize asks the model for a summary of msgs (instructions are the
// user's own additions to the request).
func (s *Session) summarize(ctx context.Context, msgs []Message, instructions string) (string, Usage, error) {
	prompt := compactPrompt
	if instructions = strings.TrimSpace(instructions); instructions != "" {
		prompt += "\nThe user adds: " + instructions
	}
	req := Request{Model: s.modes.Model(), Messages: append(CloneMessages(msgs), Message{Role: RoleUser, Content: prompt})}
	// The conversation's own catalog (MCP tools included), so the summary
	// request shares the cached prompt prefix of the turns around it.
	if reg := s.tools.fix(ctx); reg != nil {
		req.Tools = reg.Specs()
	}
	req.Reasoning = s.modes.Reasoning()
	resp, err := s.cfg.Provider.Stream(ctx, req, func(Delta) {})
	if err != nil {
		return "", Usage{}, err
	}
	text := strings.TrimSpace(resp.Message.Content)
	if text == "" {
		return "", resp.Usage, errors.New("the model answered without a summary")
	}
	return text, resp.Usage, nil
}

// compactWith summarizes msgs and, when the conversation did not change
// meanwhile, makes the compacted one current (and saved).
func (s *Session) compactWith(ctx context.Context, msgs []Message, instructions string) error {
	summary, usage, err := s.summarize(ctx, msgs, instructions)
	if usage != (Usage{}) {
		s.usage.add(usage)
	}
	if err != nil {
		return err
	}
	out, err := WithSummary(msgs, summary, keepRecentTurns)
	if err != nil {
		return err
	}
	catalog := s.tools.tokens()
	before, after := EstimateTokens(msgs)+catalog, EstimateTokens(out)+catalog
	s.hist.replace(out)
	s.log.syncLive("compacted by the model")
	s.screen.Info(s.info())
	s.screen.Notice(fmt.Sprintf("compacted: ~%dk → ~%dk tokens; the model's summary replaced the older turns (the full history stays in the saved conversation)", before/1000, after/1000))
	return nil
}

// compactBeforeTurn compacts a conversation that passed its budget before
// the turn's request, saying so first; when the summary request fails it
// falls back to shrinking (FitBudget) and says that too.
func (s *Session) compactBeforeTurn(ctx context.Context, msgs []Message) []Message {
	used, limit := EstimateTokens(msgs)+s.tools.tokens(), s.modes.contextBudget()
	s.screen.Notice(fmt.Sprintf("the conversation passed its context budget (~%dk of ~%dk tokens): compacting it with a summary from the model first", used/1000, limit/1000))
	err := s.compactWith(ctx, msgs, "")
	if err == nil {
		return s.hist.snapshot()
	}
	if ctx.Err() != nil {
		return msgs
	}
	fitted, rep, changed := FitBudget(msgs, s.messageBudget())
	if changed {
		s.hist.replace(fitted)
	}
	s.screen.Notice("the summary request failed (" + DescribeError(err) + "); " + rep.String())
	if !changed {
		return msgs
	}
	return CloneMessages(fitted)
}
