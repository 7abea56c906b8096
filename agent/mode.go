package agent

import (
	"fmt"
	"strings"
)

// Modes (/mode). In plan mode the invocation guard refuses every mutating
// tool and bash_exec, as it does for subagents; auto-edit applies edits
// without review even when /edits review is on.
const (
	ModeDefault  = "default"
	ModePlan     = "plan"
	ModeAutoEdit = "auto-edit"
)

// Modes lists the accepted modes.
var Modes = []string{ModeDefault, ModePlan, ModeAutoEdit}

// modeNotes tell the model of a mode change, with the next user message.
// Each must stay distinct: modeKnown finds them in the history.
var modeNotes = map[string]string{
	ModePlan:     "\n\n[Fido: the user switched to plan mode: only read, search, update the plan, ask and delegate; bash_exec runs only in a read-only sandbox (nothing writable but a temp dir, no network) where this machine enforces one; patch, rm, rmdir, mkdir, javascript_execute and other changing tools are refused until the user switches back]",
	ModeDefault:  "\n\n[Fido: the user switched back to the default mode: changing tools work again (with the usual approvals)]",
	ModeAutoEdit: "\n\n[Fido: the user switched to auto-edit mode: file edits apply without review; commands still need approval]",
}

// modeName is the mode as shown (""/unset is default). Called with s.mu held.
func (s *Session) modeName() string {
	if s.mode == "" {
		return ModeDefault
	}
	return s.mode
}

// Mode is the current mode.
func (s *Session) Mode() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.modeName()
}

// setMode shows or changes the mode; the model hears of a change with the
// next user message, and the conversation saves it.
func (s *Session) setMode(arg string) {
	arg = strings.TrimSpace(arg)
	s.mu.Lock()
	if arg == "" {
		cur := s.modeName()
		s.mu.Unlock()
		s.ui.Notice("mode: " + cur + " (" + strings.Join(Modes, ", ") + ")")
		return
	}
	if !contains(Modes, arg) {
		s.mu.Unlock()
		s.ui.Error(fmt.Sprintf("/mode: %q is not one of %s", arg, strings.Join(Modes, ", ")))
		return
	}
	changed := s.modeName() != arg
	s.mode = arg
	info := s.info()
	s.mu.Unlock()
	s.ui.Info(info)
	if changed {
		s.saveMode(arg)
	}
	s.ui.Notice("mode: " + arg)
}

// modeKnown is the mode the model was last told of in msgs: the newest
// mode note on a user message, or the default mode when none has one (a
// conversation starts in it as far as the model knows).
func modeKnown(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != RoleUser {
			continue
		}
		known, at := "", -1
		for mode, note := range modeNotes {
			if j := strings.LastIndex(msgs[i].Content, note); j > at {
				known, at = mode, j
			}
		}
		if known != "" {
			return known
		}
	}
	return ModeDefault
}

// modeNote is what the next user message adds so that the model knows the
// mode: nothing when msgs already tell it, else the note for mode. So a
// change and its undoing before the next message tell nothing, and a
// conversation that does not carry the change (a /new in plan mode, one
// resumed after a /mode its user never sent a message under, one rewound
// or compacted past the note) is told with its next message.
func modeNote(msgs []Message, mode string) string {
	if modeKnown(msgs) == mode {
		return ""
	}
	return modeNotes[mode]
}

// saveMode records the mode with the conversation.
func (s *Session) saveMode(mode string) {
	s.save(func(l *ConversationLog) error { return l.SetMode(mode) }, Message{})
}
