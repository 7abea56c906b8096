package agent

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/fido-nvim/fido/tools"
)

// A session's conversation is saved as it happens (ConversationStore): the
// user message when a turn starts, every assistant message and tool result
// as the turn adds it, and a "live" record whenever the conversation was
// rewritten in memory (compaction, shrinking, a plan sync). The system
// message is never saved: a resumed conversation runs under the current one.

// replayMessages bounds what a resumed transcript shows (the buffer keeps
// its newest entries anyway).
const replayMessages = 200

// convRecorder saves a running turn's messages as the loop adds them.
type convRecorder struct{ s *Session }

func (r convRecorder) Message(m Message, res *tools.Result) {
	var note *ResultNote
	if res != nil {
		note = &ResultNote{Summary: res.Summary, IsError: res.IsError}
	}
	r.s.save(func(l *ConversationLog) error { return l.AppendResult(m, note) }, m)
}

func (r convRecorder) ToolStarted(call ToolCall) {
	r.s.save(func(l *ConversationLog) error { return l.ToolStarted(call.ID) }, Message{})
}

// save runs one write on the conversation log (created on first use) and
// keeps s.savedLive in step; m.Role == "" means no message was added.
// A failed write is reported once; the conversation goes on in memory.
func (s *Session) save(write func(*ConversationLog) error, m Message) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	l, seed := s.log, false
	if l == nil {
		if l = s.createLogLocked(); l == nil {
			return
		}
		seed = true
	}
	// One write and one fsync: a new conversation's first records (its
	// mode, a restored plan, the first message and its title) go together.
	err := l.Batch(func() error {
		if seed {
			s.seedLogLocked(l)
		}
		return write(l)
	})
	if err != nil {
		s.saveFailedLocked(err)
		return
	}
	if m.Role != "" && m.Role != RoleSystem {
		s.savedLive = append(s.savedLive, m.Clone())
	}
}

// saveFailedLocked tells the user, once, that the conversation is no
// longer saved (the log refuses writes after a failed one). Called with
// logMu held.
func (s *Session) saveFailedLocked(err error) {
	if !s.logFailed {
		s.logFailed = true
		s.ui.Error("the conversation could not be saved: " + err.Error())
	}
}

// ensureLogLocked returns the conversation log, creating the conversation
// on first use. Called with logMu held.
func (s *Session) ensureLogLocked() *ConversationLog {
	if s.log != nil {
		return s.log
	}
	l := s.createLogLocked()
	if l != nil {
		_ = l.Batch(func() error { s.seedLogLocked(l); return nil })
	}
	return l
}

// createLogLocked creates the conversation's log, or returns nil when
// conversations are not saved or it cannot be created (the user hears of
// it once). Called with logMu held and no log yet.
func (s *Session) createLogLocked() *ConversationLog {
	if s.cfg.Conversations == nil || s.logFailed {
		return nil
	}
	s.mu.Lock()
	id := s.id
	s.mu.Unlock()
	l, err := s.cfg.Conversations.Create(id, s.cfg.Root, s.model())
	if err != nil {
		s.logFailed = true
		s.ui.Error("the conversation cannot be saved: " + err.Error())
		return nil
	}
	s.log = l
	s.savedLive = nil
	return l
}

// seedLogLocked writes what a new log starts with. Called with logMu held.
func (s *Session) seedLogLocked(l *ConversationLog) {
	s.mu.Lock()
	mode := s.modeName()
	s.mu.Unlock()
	// The mode the session is in (a /new or a restart in plan mode)
	// belongs to this conversation from its start.
	_ = l.SetMode(mode)
	// What the conversation already holds (a restored plan) comes first.
	for _, m := range s.Messages() {
		if m.Role != RoleSystem {
			if err := l.Append(m); err == nil {
				s.savedLive = append(s.savedLive, m.Clone())
			}
		}
	}
}

// syncLive records the in-memory conversation as the live one when it no
// longer equals what the log holds (after compaction, shrinking, a plan
// sync or a failed turn that dropped its user message).
func (s *Session) syncLive(reason string) {
	msgs := s.Messages()
	live := msgs[1:]
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if s.log == nil || reflect.DeepEqual(nonEmpty(live), nonEmpty(s.savedLive)) {
		return
	}
	if err := s.log.ReplaceLive(live, reason); err != nil {
		if !s.logFailed {
			s.logFailed = true
			s.ui.Error("the conversation could not be saved: " + err.Error())
		}
		return
	}
	s.savedLive = CloneMessages(live)
}

func nonEmpty(ms []Message) []Message {
	if len(ms) == 0 {
		return nil
	}
	return ms
}

// saveSeen records the read-before-write knowledge when it changed.
func (s *Session) saveSeen() {
	seen := s.files.Snapshot()
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if s.log == nil || reflect.DeepEqual(seen, s.savedSeen) {
		return
	}
	if err := s.log.SetSeen(seen); err == nil {
		s.savedSeen = seen
	}
}

// closeLog saves the cost and releases the current conversation.
func (s *Session) closeLog() {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if s.log != nil {
		total, _ := s.Totals()
		_ = s.log.SetMeta("", "", total.Cost)
		_ = s.log.Close()
	}
	s.log, s.savedLive, s.savedSeen, s.logFailed = nil, nil, nil, false
}

// ConversationID is the current conversation's id ("" before it is saved).
func (s *Session) ConversationID() string {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if s.log == nil {
		return ""
	}
	return s.log.ID()
}

// resumeNewest resumes the workspace's newest conversation (option resume =
// "last"). One that another Neovim has open is left to it.
func (s *Session) resumeNewest() {
	id, err := s.cfg.Conversations.Newest()
	if err != nil {
		s.ui.Notify("Fido could not list the saved conversations: "+err.Error(), LevelWarn)
		return
	}
	if id == "" {
		return
	}
	if err := s.switchTo(id); err != nil {
		if errors.Is(err, ErrConversationBusy) {
			s.ui.Notice("the newest conversation is open in another Fido; this is a new one (/sessions lists them)")
			return
		}
		s.ui.Error("could not resume the newest conversation: " + err.Error())
	}
}

// switchTo makes a saved conversation the current one: its messages under
// the current system prompt, the plan brought up to date, the transcript
// replayed.
func (s *Session) switchTo(id string) error {
	l, conv, err := s.cfg.Conversations.Open(id)
	if err != nil {
		return err
	}
	// As /recall does: the saved plan exchanges give way to the workspace's
	// current plan, restored right after the system message.
	msgs := RecallMessages(conv.Messages, s.cfg.SystemPrompt(), s.currentPlanSync())
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		l.Close()
		return errors.New("a turn is running; cancel it first")
	}
	s.messages = msgs
	s.pending = nil
	s.reg = nil // another conversation: it fixes its own tool catalog
	s.id, s.turn = conv.Meta.ID, 0
	for _, m := range conv.Messages {
		s.turn = max(s.turn, m.Turn)
	}
	s.review, s.revertNotes, s.nested = nil, nil, nil
	s.total, s.sub = Usage{Cost: conv.Meta.Cost}, Usage{}
	if conv.Meta.Model != "" {
		s.cfg.Model = conv.Meta.Model
	}
	if conv.Meta.Mode != "" {
		s.mode = conv.Meta.Mode
	}
	info := s.info()
	total := s.total
	s.mu.Unlock()
	s.closeLog()
	// What it saw of each file, so the read-before-write guard holds across
	// the restart.
	s.files.Replace(conv.Seen)
	s.logMu.Lock()
	s.log, s.savedLive, s.savedSeen = l, CloneMessages(conv.Messages), conv.Seen
	s.logMu.Unlock()
	s.syncLive("resumed under the current plan")

	s.ui.Info(info)
	s.ui.Usage(total, Usage{})
	s.replay(conv)
	for _, w := range conv.Warnings {
		s.ui.Notice("while loading: " + w)
	}
	title := conv.Meta.Title
	if title == "" {
		title = "(untitled)"
	}
	s.ui.Notice(fmt.Sprintf("resumed %q (%d messages, %s); /new starts a new conversation, /sessions lists them",
		title, len(conv.Messages), age(conv.Meta.Updated)))
	return nil
}

// replay renders the newest part of a conversation into the transcript as
// it looked live.
func (s *Session) replay(conv *LoadedConversation) {
	msgs := conv.Messages
	if len(msgs) > replayMessages {
		msgs = msgs[len(msgs)-replayMessages:]
		s.ui.Notice(fmt.Sprintf("(%d older messages are in the saved conversation)", len(conv.Messages)-replayMessages))
	}
	for _, m := range msgs {
		switch m.Role {
		case RoleUser:
			s.ui.UserText(m.Content)
		case RoleAssistant:
			if m.Reasoning != "" {
				s.ui.Reasoning(m.Reasoning)
			}
			if m.Content != "" {
				s.ui.Content(m.Content)
			}
			for _, c := range m.ToolCalls {
				summary := c.Name
				if s.cfg.Registry != nil {
					summary = s.cfg.Registry.SummarizeCall(c.Name, []byte(c.Arguments))
				}
				s.ui.ToolCall(c.ID, c.Name, summary)
			}
		case RoleTool:
			note := conv.Results[m.ToolCallID]
			if note.Summary == "" {
				note.Summary = "done"
			}
			s.ui.ToolResult(m.ToolCallID, m.Name, note.Summary, note.IsError)
		}
	}
	s.ui.SetState(StateIdle)
}

// newConversation starts an empty conversation; the current one stays saved.
func (s *Session) newConversation() {
	sys := s.cfg.SystemPrompt()
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		s.ui.Error("/new: a turn is running; cancel it first")
		return
	}
	s.messages = []Message{{Role: RoleSystem, Content: sys}}
	if s.cfg.Plans != nil {
		if p := s.cfg.Plans.Current(); p != nil {
			s.messages = append(s.messages, PlanRestoreMessages(*p)...)
		}
	}
	s.pending = nil
	s.reg = nil // a new conversation takes the MCP servers' current tools
	s.total, s.sub = Usage{}, Usage{}
	s.id, s.turn = newConversationID(now()), 0
	s.review, s.revertNotes, s.nested = nil, nil, nil
	s.mu.Unlock()
	s.closeLog()
	s.files.Replace(nil)
	s.ui.Usage(Usage{}, Usage{})
	s.ui.Notice("── new conversation ── (the previous one is saved: /sessions)")
}

// conversationLabels are the picker lines for saved conversations.
func conversationLabels(metas []ConversationMeta, current string) []string {
	out := make([]string, len(metas))
	for i, m := range metas {
		title := m.Title
		if title == "" {
			title = "(untitled)"
		}
		mark := ""
		if m.ID == current {
			mark = " (current)"
		}
		out[i] = fmt.Sprintf("%s%s · %s · %d messages · $%.4f", title, mark, age(m.Updated), m.Messages, m.Cost)
	}
	return out
}

// sessions lists the workspace's conversations; choosing one resumes it,
// or, with "delete", deletes it after a confirmation.
func (s *Session) sessions(arg string) {
	if s.cfg.Conversations == nil {
		s.ui.Notice("conversations are not saved in this session")
		return
	}
	metas, bad, err := s.cfg.Conversations.List()
	if err != nil {
		s.ui.Error("/sessions: " + err.Error())
		return
	}
	if len(bad) > 0 {
		s.ui.Notice(fmt.Sprintf("skipped %d unreadable conversation file(s) in %s: %s", len(bad), s.cfg.Conversations.Dir(), strings.Join(bad, ", ")))
	}
	if len(metas) == 0 {
		s.ui.Notice("no saved conversations yet")
		return
	}
	current := s.ConversationID()
	ctx := context.Background()
	switch arg {
	case "":
		idx, err := s.ui.Select(ctx, "Resume which conversation?", conversationLabels(metas, current))
		if err != nil || idx < 0 || idx >= len(metas) {
			return
		}
		if metas[idx].ID == current {
			s.ui.Notice("that is the current conversation")
			return
		}
		if err := s.switchTo(metas[idx].ID); err != nil {
			s.ui.Error("could not resume it: " + err.Error())
		}
	case "delete":
		idx, err := s.ui.Select(ctx, "Delete which conversation?", conversationLabels(metas, current))
		if err != nil || idx < 0 || idx >= len(metas) {
			return
		}
		m := metas[idx]
		if m.ID == current {
			s.ui.Error("that is the current conversation: /new first, then delete it")
			return
		}
		ok, err := s.ui.Select(ctx, fmt.Sprintf("Delete %q for good?", m.Title), []string{"Cancel", "Delete"})
		if err != nil || ok != 1 {
			s.ui.Notice("nothing deleted")
			return
		}
		if err := s.cfg.Conversations.Delete(m.ID); err != nil {
			s.ui.Error("could not delete it: " + err.Error())
			return
		}
		s.ui.Notice(fmt.Sprintf("deleted %q", m.Title))
	default:
		s.ui.Error(fmt.Sprintf("/sessions: unknown argument %q (use /sessions or /sessions delete)", arg))
	}
}

// rename sets the current conversation's title.
func (s *Session) rename(title string) {
	title = strings.TrimSpace(title)
	if title == "" {
		s.ui.Error("/rename needs a title: /rename {title}")
		return
	}
	s.logMu.Lock()
	l := s.ensureLogLocked()
	s.logMu.Unlock()
	if l == nil {
		s.ui.Error("/rename: conversations are not saved in this session")
		return
	}
	if err := l.SetMeta(title, "", 0); err != nil {
		s.ui.Error("/rename: " + err.Error())
		return
	}
	s.ui.Notice(fmt.Sprintf("renamed this conversation to %q", title))
}

// fork copies the current conversation into a new one and switches to it.
func (s *Session) fork() {
	if s.cfg.Conversations == nil {
		s.ui.Error("/fork: conversations are not saved in this session")
		return
	}
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		s.ui.Error("/fork: a turn is running; cancel it first")
		return
	}
	msgs := CloneMessages(s.messages)
	total, mode := s.total, s.modeName()
	s.mu.Unlock()
	oldTitle := ""
	s.logMu.Lock()
	if s.log != nil {
		oldTitle = s.log.Meta().Title
	}
	s.logMu.Unlock()
	newID := newConversationID(now())
	l, err := s.cfg.Conversations.Create(newID, s.cfg.Root, s.model())
	if err != nil {
		s.ui.Error("/fork: " + err.Error())
		return
	}
	var saved []Message
	for _, m := range msgs[1:] {
		if err := l.Append(m); err != nil {
			l.Close()
			s.ui.Error("/fork: " + err.Error())
			return
		}
		saved = append(saved, m)
	}
	title := "fork of " + oldTitle
	if oldTitle == "" {
		title = "fork"
	}
	_ = l.SetMeta(title, "", total.Cost)
	_ = l.SetMode(mode) // the fork goes on in the mode it was made in
	seen := s.files.Snapshot()
	_ = l.SetSeen(seen)
	s.closeLog()
	s.mu.Lock()
	s.id = newID
	s.mu.Unlock()
	s.logMu.Lock()
	s.log, s.savedLive, s.savedSeen = l, saved, seen
	s.logMu.Unlock()
	s.ui.Notice(fmt.Sprintf("forked into a new conversation %q; the original stays saved", title))
}

// model is the current model id.
func (s *Session) model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Model
}

// age says how long ago t was, in words.
func age(t time.Time) string {
	d := now().Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	}
	return fmt.Sprintf("%d days ago", int(d.Hours()/24))
}
