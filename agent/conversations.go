package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fido-nvim/fido/agent/conversation"
)

// Switching conversations: resuming a saved one (at start, /sessions), a
// new one (/new), a copy (/fork), and naming it (/rename). Every switch
// happens while no turn runs, and resets what belongs to one conversation:
// its history and log, its tools, its totals, its edit trust.

// replayMessages bounds what a resumed transcript shows (the buffer keeps
// its newest entries anyway).
const replayMessages = 200

// resumeNewest resumes the workspace's newest conversation (option resume =
// "last"). One that another Neovim has open is left to it.
func (s *Session) resumeNewest() {
	id, err := s.cfg.Conversations.Newest()
	if err != nil {
		s.screen.Notify("Fido could not list the saved conversations: "+err.Error(), LevelWarn)
		return
	}
	if id == "" {
		return
	}
	if err := s.switchTo(id); err != nil {
		if errors.Is(err, conversation.ErrBusy) {
			s.screen.Notice("the newest conversation is open in another Fido; this is a new one (/sessions lists them)")
			return
		}
		s.screen.Error("could not resume the newest conversation: " + err.Error())
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
	var prev Usage
	if !s.slot.idle(func() {
		prev, _ = s.usage.totals()
		s.hist.reset(msgs, conv.Meta.ID)
		s.tools.reset() // another conversation: it fixes its own tool catalog
		s.tools.forgetNested()
		s.trust.forget()
		s.usage.reset(conv.Meta.Cost)
		s.modes.adopt(conv.Meta.Model, conv.Meta.Mode)
	}) {
		l.Close()
		return errors.New("a turn is running; cancel it first")
	}
	info := s.info()
	total, _ := s.usage.totals()
	s.log.close(prev.Cost) // the previous conversation's own cost

	// What it saw of each file, so the read-before-write guard holds across
	// the restart.
	s.files.Replace(conv.Seen)
	s.log.adopt(l, CloneMessages(conv.Messages), conv.Seen)
	s.log.syncLive("resumed under the current plan")

	s.screen.Info(info)
	s.screen.Usage(total, Usage{})
	s.replay(conv)
	for _, w := range conv.Warnings {
		s.screen.Notice("while loading: " + w)
	}
	title := conv.Meta.Title
	if title == "" {
		title = "(untitled)"
	}
	s.screen.Notice(fmt.Sprintf("resumed %q (%d messages, %s); /new starts a new conversation, /sessions lists them",
		title, len(conv.Messages), age(conv.Meta.Updated)))
	return nil
}

// replay renders the newest part of a conversation into the transcript as
// it looked live.
func (s *Session) replay(conv *conversation.Loaded) {
	msgs := conv.Messages
	if len(msgs) > replayMessages {
		msgs = msgs[len(msgs)-replayMessages:]
		s.screen.Notice(fmt.Sprintf("(%d older messages are in the saved conversation)", len(conv.Messages)-replayMessages))
	}
	for _, m := range msgs {
		switch m.Role {
		case RoleUser:
			s.screen.UserText(m.Content)
		case RoleAssistant:
			if m.Reasoning != "" {
				s.screen.Reasoning(m.Reasoning)
			}
			if m.Content != "" {
				s.screen.Content(m.Content)
			}
			for _, c := range m.ToolCalls {
				s.screen.ToolCall(ToolCallInfo{ID: c.ID, Name: c.Name, Summary: s.tools.summarize(c), Arguments: c.Arguments,
					Access: s.tools.access(c.Name)})
			}
		case RoleTool:
			note := conv.Results[m.ToolCallID]
			if note.Summary == "" {
				note.Summary = "done"
			}
			s.screen.ToolResult(ToolResultInfo{ID: m.ToolCallID, Name: m.Name, Summary: note.Summary, IsError: note.IsError, Content: m.Content})
		}
	}
	s.screen.SetState(StateIdle)
}

// cmdNew starts an empty conversation; the current one stays saved.
func cmdNew(s *Session, _ string) {
	msgs := []Message{{Role: RoleSystem, Content: s.cfg.SystemPrompt()}}
	msgs = append(msgs, s.currentPlanSync()...)
	if !s.slot.idle(func() {
		s.hist.reset(msgs, conversation.NewID(now()))
		s.tools.reset() // a new conversation takes the MCP servers' current tools
		s.tools.forgetNested()
		s.trust.forget()
	}) {
		s.screen.Error("/new: a turn is running; cancel it first")
		return
	}
	s.usage.reset(0)
	s.log.close(0) // its cost was saved with its turns
	s.files.Replace(nil)
	s.screen.Usage(Usage{}, Usage{})
	s.screen.Notice("── new conversation ── (the previous one is saved: /sessions)")
}

// conversationLabels are the picker lines for saved conversations.
func conversationLabels(metas []conversation.Meta, current string) []string {
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

// cmdSessions lists the workspace's conversations; choosing one resumes
// it, or, with "delete", deletes it after a confirmation.
func cmdSessions(s *Session, arg string) {
	store := s.cfg.Conversations
	if store == nil {
		s.screen.Notice("conversations are not saved in this session")
		return
	}
	metas, bad, err := store.List()
	if err != nil {
		s.screen.Error("/sessions: " + err.Error())
		return
	}
	if len(bad) > 0 {
		s.screen.Notice(fmt.Sprintf("skipped %d unreadable conversation file(s) in %s: %s", len(bad), store.Dir(), strings.Join(bad, ", ")))
	}
	if len(metas) == 0 {
		s.screen.Notice("no saved conversations yet")
		return
	}
	current := s.log.id()
	ctx := context.Background()
	switch arg {
	case "":
		idx, err := s.prompt.Select(ctx, "Resume which conversation?", conversationLabels(metas, current))
		if err != nil || idx < 0 || idx >= len(metas) {
			return
		}
		if metas[idx].ID == current {
			s.screen.Notice("that is the current conversation")
			return
		}
		if err := s.switchTo(metas[idx].ID); err != nil {
			s.screen.Error("could not resume it: " + err.Error())
		}
	case "delete":
		idx, err := s.prompt.Select(ctx, "Delete which conversation?", conversationLabels(metas, current))
		if err != nil || idx < 0 || idx >= len(metas) {
			return
		}
		m := metas[idx]
		if m.ID == current {
			s.screen.Error("that is the current conversation: /new first, then delete it")
			return
		}
		ok, err := s.prompt.Select(ctx, fmt.Sprintf("Delete %q for good?", m.Title), []string{"Cancel", "Delete"})
		if err != nil || ok != 1 {
			s.screen.Notice("nothing deleted")
			return
		}
		if err := store.Delete(m.ID); err != nil {
			s.screen.Error("could not delete it: " + err.Error())
			return
		}
		s.screen.Notice(fmt.Sprintf("deleted %q", m.Title))
	default:
		s.screen.Error(fmt.Sprintf("/sessions: unknown argument %q (use /sessions or /sessions delete)", arg))
	}
}

// cmdRename sets the current conversation's title.
func cmdRename(s *Session, title string) {
	if title == "" {
		s.screen.Error("/rename needs a title: /rename {title}")
		return
	}
	l := s.log.ensure()
	if l == nil {
		s.screen.Error("/rename: conversations are not saved in this session")
		return
	}
	if err := l.SetMeta(title, "", 0); err != nil {
		s.screen.Error("/rename: " + err.Error())
		return
	}
	s.screen.Notice(fmt.Sprintf("renamed this conversation to %q", title))
}

// cmdFork copies the current conversation into a new one and switches to it.
func cmdFork(s *Session, _ string) {
	store := s.cfg.Conversations
	if store == nil {
		s.screen.Error("/fork: conversations are not saved in this session")
		return
	}
	var msgs []Message
	if !s.slot.idle(func() { msgs = s.hist.snapshot() }) {
		s.screen.Error("/fork: a turn is running; cancel it first")
		return
	}
	total, _ := s.usage.totals()
	mode := s.modes.Mode()
	oldTitle := s.log.title()
	newID := conversation.NewID(now())
	l, err := store.Create(newID, s.cfg.Root, s.modes.Model())
	if err != nil {
		s.screen.Error("/fork: " + err.Error())
		return
	}
	var saved []Message
	for _, m := range msgs[1:] {
		if err := l.Append(m); err != nil {
			l.Close()
			s.screen.Error("/fork: " + err.Error())
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
	s.log.close(total.Cost)
	s.hist.setID(newID)
	s.log.adopt(l, saved, seen)
	s.screen.Notice(fmt.Sprintf("forked into a new conversation %q; the original stays saved", title))
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
