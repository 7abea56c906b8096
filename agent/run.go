package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fido-nvim/fido/agent/conversation"
	"github.com/fido-nvim/fido/tools"
	textfmt "github.com/fido-nvim/fido/tools/text"
)

// A turn: a user message admitted into the turn slot, the loop run with
// the conversation's tools, the result committed back into the history
// and saved, and the messages queued meanwhile sent as the next one.

// turnStart is what a turn takes from the session as it starts.
type turnStart struct {
	user      Message
	notes     []string // revert notes the user message carries
	inv       tools.Invocation
	msgs      []Message
	reasoning string
	compact   bool // summarize the older turns first
	shrunk    string
}

// submitMessage starts a turn with a user message (never a /command).
func (s *Session) submitMessage(text string) {
	var st turnStart
	missingKey := false
	adm := s.slot.admit(text, func() bool {
		if s.cfg.MissingKey != "" {
			missingKey = true
			return false
		}
		st = s.prepareTurn(text)
		return true
	})
	switch {
	case adm.after != nil:
		go s.submitAfter(adm.after, text)
	case adm.queued > 0:
		s.screen.Notice(fmt.Sprintf("queued (%d): %s — sent when this turn ends; <C-c> cancels and puts it back in the input", adm.queued, textfmt.ShortenTo(textfmt.FirstLine(text), 60)))
	case missingKey:
		s.screen.Error(s.cfg.MissingKey)
		s.restoreDraft(text)
	case adm.turn != nil:
		if adm.turn.clearBar {
			s.screen.Subagent(nil)
		}
		if st.shrunk != "" {
			s.screen.Notice(st.shrunk)
		}
		go s.runTurn(adm.turn, text, st)
	}
}

// prepareTurn takes what the turn needs; called in the turn slot's lock.
func (s *Session) prepareTurn(text string) turnStart {
	var st turnStart
	// Past the budget, the model summarizes the older turns before this
	// one (runTurn); with too few turns for that, old parts are shrunk.
	budget := s.modes.contextBudget()
	st.compact = budget > 0 && s.hist.tokens()+s.tools.tokens() > budget && s.hist.userTurns() > keepRecentTurns
	if !st.compact {
		if rep, changed := s.hist.fit(s.messageBudget()); changed {
			st.shrunk = rep.String()
		}
	}
	st.notes = s.trust.newTurn()
	n := s.hist.nextTurn()
	st.user = Message{Role: RoleUser, Content: text, Turn: n, Time: now().UTC().Format(time.RFC3339)}
	if len(st.notes) > 0 {
		st.user.Content += revertMarker + strings.Join(st.notes, "; ") + "]"
	}
	st.msgs = s.hist.snapshot()
	_, reasoning, mode := s.modes.snapshot()
	st.reasoning = reasoning
	st.user.Content += modeNote(st.msgs, mode)
	id, _ := s.hist.ident()
	st.inv = tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain, AgentID: "main"}, Files: s.files, Gate: s.trust.gate,
		Conversation: id, Turn: n, PlanMode: mode == ModePlan}
	return st
}

func (s *Session) runTurn(tr *turn, text string, st turnStart) {
	defer tr.finish()
	ctx := tr.ctx
	startTotal, _ := s.usage.totals()
	tr.event(EvTurnStart)
	msgs := st.msgs
	if st.compact {
		msgs = s.compactBeforeTurn(ctx, msgs)
	}
	s.screen.UserText(text)
	loop := &Loop{
		Provider: s.cfg.Provider, Registry: s.tools.fix(ctx), Model: s.modes.Model(), Reasoning: st.reasoning,
		MaxIterations: s.cfg.MaxIterations,
		Invocation:    st.inv,
		Observer:      &sessionObserver{s: s, ctx: ctx, tr: tr},
		Recorder:      convRecorder{s.log},
	}
	if nested := s.tools.nestedFor(s.hist.snapshot); nested != nil {
		loop.AfterTool = func(call ToolCall, res tools.Result) tools.Result { return attachNested(nested, call, res) }
	}
	user := st.user
	s.log.save(func(l *conversation.Log) error { return l.Append(user) }, user)
	before := len(msgs) + 1
	conv, err := loop.Run(ctx, append(msgs, user))
	progressed := len(conv) > before
	cancelled := false
	queued := s.slot.end(tr, func() {
		cancelled = ctx.Err() != nil
		switch {
		case err == nil:
			s.hist.commit(Compact(conv))
		case progressed:
			// Tools ran: their effects are real, so the model must keep seeing them.
			s.hist.commit(conv)
		default:
			s.hist.commit(nil)
			// The message is not kept: its revert notes go with the next one.
			s.trust.giveBack(st.notes)
		}
	})
	total, _ := s.usage.totals()
	s.log.endTurn(total.Cost)
	s.screen.Info(s.info())
	if len(queued) > 0 && !cancelled { // a cancel put them back into the input already
		defer s.submitMessage(strings.Join(queued, "\n\n"))
	}

	switch {
	case err == nil:
		endTotal, _ := s.usage.totals()
		s.screen.Notice(turnCost(startTotal, endTotal))
		tr.event(EvDone)
	case cancelled:
		// Cancel already restored the draft and went idle.
		tr.event(EvCancel)
	default:
		s.screen.Error(DescribeError(err))
		if !progressed {
			s.restoreDraft(text)
		}
		tr.event(EvError)
	}
}

// unwindTimeout bounds how long a message sent right after a cancel waits
// for the cancelled turn to finish unwinding.
var unwindTimeout = 10 * time.Second

// submitAfter submits text once the cancelled turn that owns prev is done.
func (s *Session) submitAfter(prev chan struct{}, text string) {
	t := time.NewTimer(unwindTimeout)
	defer t.Stop()
	select {
	case <-prev:
		s.submitMessage(text)
	case <-t.C:
		s.screen.Error("the cancelled turn has not stopped yet (a model request ignores the cancel); send the message again in a moment")
		s.restoreDraft(text)
	}
}

// sessionObserver maps loop events to the reducer and the screen.
type sessionObserver struct {
	s   *Session
	ctx context.Context
	tr  *turn
}

func (o *sessionObserver) ModelCall(iteration int) {
	if iteration > 1 {
		o.tr.event(EvRequest)
	}
}

func (o *sessionObserver) Delta(d Delta) {
	if o.ctx.Err() != nil {
		return // late deltas after a cancel never reach the transcript
	}
	switch d.Kind {
	case DeltaReasoning:
		o.s.screen.Reasoning(d.Text)
		o.tr.event(EvReasoning)
	case DeltaContent:
		o.s.screen.Content(d.Text)
		o.tr.event(EvContent)
	case DeltaToolCall:
		o.tr.event(EvToolCall)
	case DeltaStatus:
		o.s.screen.Notice(d.Text)
	}
}

func (o *sessionObserver) ToolCall(call ToolCall, summary string) {
	o.tr.event(EvToolCall)
	o.s.screen.ToolCall(ToolCallInfo{ID: call.ID, Name: call.Name, Summary: summary, Arguments: call.Arguments,
		Access: o.s.tools.access(call.Name)})
}

func (o *sessionObserver) ToolResult(call ToolCall, res tools.Result) {
	o.s.screen.ToolResult(ToolResultInfo{ID: call.ID, Name: call.Name, Summary: res.Summary, IsError: res.IsError, Content: res.Content})
}

func (o *sessionObserver) Usage(u Usage) { o.s.usage.add(u) }

// Cancel aborts the running turn (and any subagent, through its context),
// restores the unsent draft and returns to idle at once. A tool still stuck
// in a system call does not hold the turn: the loop answers its call
// "cancelled" and drops its late result.
func (s *Session) Cancel() {
	draft, queued, gen, ok := s.slot.interrupt()
	if !ok {
		return
	}
	s.screen.Notice("cancelled")
	// The cancelled message, then what was queued behind it, back in the
	// input for editing.
	if back := strings.Join(append([]string{draft}, queued...), "\n\n"); strings.TrimSpace(back) != "" {
		s.restoreDraft(strings.TrimSpace(back))
	}
	s.slot.event(gen, EvCancel)
}
