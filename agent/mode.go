package agent

import (
	"strings"

	"github.com/fido-nvim/fido/agent/conversation"
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
	ModePlan:     "\n\n[Fido: the user switched to plan mode: only read, search, update the plan, ask and delegate; patch, rm, rmdir, mkdir, bash_exec, javascript_execute and other changing tools are refused until the user switches back]",
	ModeDefault:  "\n\n[Fido: the user switched back to the default mode: changing tools work again (with the usual approvals)]",
	ModeAutoEdit: "\n\n[Fido: the user switched to auto-edit mode: file edits apply without review; commands still need approval]",
}

// cmdMode shows or changes the mode (/mode); the model hears of a change
// with the next user message, and the conversation saves it.
func cmdMode(s *Session, arg string) {
	if arg == "" {
		s.screen.Notice("mode: " + s.modes.Mode() + " (" + strings.Join(Modes, ", ") + ")")
		return
	}
	changed, err := s.modes.setMode(arg)
	if err != nil {
		s.screen.Error("/mode: " + err.Error())
		return
	}
	s.screen.Info(s.info())
	if changed {
		s.log.save(func(l *conversation.Log) error { return l.SetMode(arg) }, Message{})
	}
	s.screen.Notice("mode: " + arg)
}

// cmdReasoning shows or sets the reasoning effort (/reasoning).
func cmdReasoning(s *Session, arg string) {
	if arg != "" {
		if err := s.modes.setReasoning(arg); err != nil {
			s.screen.Error("/reasoning: " + err.Error())
			return
		}
		s.screen.Info(s.info())
	}
	label := s.modes.Reasoning()
	if label == "" {
		label = "model default"
	}
	s.screen.Notice("reasoning effort: " + label)
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
