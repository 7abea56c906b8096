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
	req := Request{Model: s.model(), Messages: append(CloneMessages(msgs), Message{Role: RoleUser, Content: prompt})}
	// The conversation's own catalog (MCP tools included), so the summary
	// request shares the cached prompt prefix of the turns around it.
	if reg := s.conversationTools(ctx); reg != nil {
		req.Tools = reg.Specs()
	}
	s.mu.Lock()
	req.Reasoning = s.reasoning
	s.mu.Unlock()
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

// compactNow runs /compact [instructions]: it holds the session like a turn
// (messages sent meanwhile are queued, <C-c> cancels it).
func (s *Session) compactNow(instructions string) {
	s.mu.Lock()
	if s.running || s.closed {
		s.mu.Unlock()
		s.ui.Error("/compact: a turn is running; wait for it or cancel it first")
		return
	}
	msgs := CloneMessages(s.messages)
	if len(userTurnStarts(msgs)) <= keepRecentTurns {
		s.mu.Unlock()
		s.ui.Notice(errNothingToCompact.Error())
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.running, s.cancel, s.draft, s.done = true, cancel, "", done
	s.gen++
	gen := s.gen
	s.mu.Unlock()
	s.setState(gen, StateThinking)
	s.ui.Notice("compacting: asking the model for a summary of the conversation…")
	err := s.compactWith(ctx, msgs, instructions)
	s.mu.Lock()
	s.running, s.cancelled, s.cancel = false, false, nil
	queued := s.queued
	s.queued = nil
	s.mu.Unlock()
	cancel()
	close(done)
	s.setState(gen, StateIdle)
	if err != nil {
		if ctx.Err() != nil {
			s.ui.Notice("compaction cancelled; the conversation is unchanged")
		} else {
			s.ui.Error("compaction failed, the conversation is unchanged: " + DescribeError(err))
		}
	}
	if len(queued) > 0 {
		s.submitMessage(strings.Join(queued, "\n\n"))
	}
}

// compactWith summarizes msgs and, when the conversation did not change
// meanwhile, makes the compacted one current (and saved).
func (s *Session) compactWith(ctx context.Context, msgs []Message, instructions string) error {
	summary, usage, err := s.summarize(ctx, msgs, instructions)
	if usage != (Usage{}) {
		s.addUsage(usage)
	}
	if err != nil {
		return err
	}
	out, err := WithSummary(msgs, summary, keepRecentTurns)
	if err != nil {
		return err
	}
	s.mu.Lock()
	before, after := s.contextTokens(msgs), s.contextTokens(out)
	s.messages = out
	s.mu.Unlock()
	s.syncLive("compacted by the model")
	s.ui.Info(s.infoNow())
	s.ui.Notice(fmt.Sprintf("compacted: ~%dk → ~%dk tokens; the model's summary replaced the older turns (the full history stays in the saved conversation)", before/1000, after/1000))
	return nil
}

// compactBeforeTurn compacts a conversation that passed its budget before
// the turn's request, saying so first; when the summary request fails it
// falls back to shrinking (FitBudget) and says that too.
func (s *Session) compactBeforeTurn(ctx context.Context, msgs []Message) []Message {
	s.mu.Lock()
	used, limit := s.contextTokens(msgs), s.budget()
	s.mu.Unlock()
	s.ui.Notice(fmt.Sprintf("the conversation passed its context budget (~%dk of ~%dk tokens): compacting it with a summary from the model first", used/1000, limit/1000))
	err := s.compactWith(ctx, msgs, "")
	if err == nil {
		return s.Messages()
	}
	if ctx.Err() != nil {
		return msgs
	}
	s.mu.Lock()
	fitted, rep, changed := FitBudget(msgs, s.messageBudget())
	if changed {
		s.messages = fitted
	}
	s.mu.Unlock()
	s.ui.Notice("the summary request failed (" + DescribeError(err) + "); " + rep.String())
	if !changed {
		return msgs
	}
	return CloneMessages(fitted)
}

// addUsage adds a request's usage outside a turn (a summary request).
func (s *Session) addUsage(u Usage) {
	s.mu.Lock()
	s.total = s.total.Add(u)
	total, sub := s.total, s.sub
	s.mu.Unlock()
	s.ui.Usage(total, sub)
}

// catalogTokens estimates the tool catalog's share of every request: the
// conversation's catalog once its first request fixed it (MCP tools
// included), the built-in tools before. Called with s.mu held.
func (s *Session) catalogTokens() int {
	reg := s.reg
	if reg == nil {
		reg = s.cfg.Registry
	}
	if reg == nil {
		return 0
	}
	n := 0
	for _, sp := range reg.Specs() {
		n += len(sp.Name) + len(sp.Description) + len(sp.Parameters) + 32
	}
	return n / 4
}

// contextTokens is the estimated size of a request carrying msgs: the
// messages and the tool catalog. Called with s.mu held.
func (s *Session) contextTokens(msgs []Message) int {
	return EstimateTokens(msgs) + s.catalogTokens()
}

// infoNow is info() with the lock taken.
func (s *Session) infoNow() SessionInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info()
}
