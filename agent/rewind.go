package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/fido-nvim/fido/tools/text"
	"github.com/fido-nvim/fido/tools/workspace"
)

// RewindChoices are /rewind's second question, in this order.
var RewindChoices = []string{"Conversation and files", "Conversation only", "Files only", "Cancel"}

// revertMarker starts the revert note appended to a user message.
const revertMarker = "\n\n[user reverted: "

// userTurn is a user message /rewind can go back to.
type userTurn struct {
	index int // in the conversation
	msg   Message
}

// rewind handles /rewind: pick a user message, then what to rewind.
func (s *Session) rewind() {
	if s.Busy() {
		s.ui.Error("/rewind: a turn is running; cancel it first")
		return
	}
	msgs := s.Messages()
	var turns []userTurn
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleUser && msgs[i].Turn > 0 {
			turns = append(turns, userTurn{i, msgs[i]})
		}
	}
	if len(turns) == 0 {
		s.ui.Notice("/rewind: no message to go back to yet")
		return
	}
	entries, _ := s.changesOf(true)
	labels := make([]string, len(turns))
	for i, t := range turns {
		labels[i] = turnLabel(t.msg, filesAfter(entries, t.msg.Turn))
	}
	ctx := context.Background()
	idx, err := s.ui.Select(ctx, "Rewind to just before which message?", labels)
	if err != nil || idx < 0 || idx >= len(turns) {
		s.ui.Notice("rewind cancelled")
		return
	}
	target := turns[idx]
	var after []workspace.UndoEntry
	for _, e := range entries {
		if e.Turn >= target.msg.Turn {
			after = append(after, e)
		}
	}
	var plan workspace.RewindPlan
	if s.cfg.Workspace != nil {
		plan = s.cfg.Workspace.PlanRewind(ctx, after)
	}
	cmds := commandsAfter(msgs[target.index:])
	preview := workspace.RewindSummary(plan)
	if len(cmds) > 0 {
		preview += "; commands ran after it, their changes cannot be restored: " + strings.Join(cmds, "; ")
	}
	first := text.ShortenTo(text.FirstLine(userText(target.msg.Content)), 50)
	mode, err := s.ui.Select(ctx, fmt.Sprintf("Rewind to before “%s” (%s)", first, preview), RewindChoices)
	if err != nil || mode < 0 || mode == 3 {
		s.ui.Notice("rewind cancelled")
		return
	}
	files, conv := mode == 0 || mode == 2, mode == 0 || mode == 1
	if files && s.cfg.Workspace != nil {
		s.ui.Notice("rewind: " + preview)
		tag := workspace.UndoEntry{Conv: s.conversationID(), Turn: s.currentTurn()}
		done, failed := s.cfg.Workspace.ApplyRewind(ctx, plan, tag)
		switch {
		case len(done) > 0:
			s.ui.Notice("rewind: " + strings.Join(done, ", "))
		case len(failed) == 0:
			s.ui.Notice("rewind: no file needed restoring")
		}
		if len(failed) > 0 {
			s.ui.Error("rewind: could not restore " + strings.Join(failed, "; "))
		}
	}
	if conv {
		s.mu.Lock()
		if s.running {
			s.mu.Unlock()
			s.ui.Error("/rewind: a turn started meanwhile; the conversation was not rewound")
			return
		}
		dropped := len(s.messages) - target.index
		if target.index < len(s.messages) {
			s.messages = s.messages[:target.index]
		}
		s.pending, s.revertNotes, s.review = nil, nil, nil
		s.mu.Unlock()
		// The model's picture of these files is older now: it reads them
		// again before overwriting them.
		for _, e := range after {
			s.files.Forget(e.Path)
		}
		s.ui.Notice(fmt.Sprintf("rewound the conversation to before “%s” (%d messages dropped); the plan is left as it is", first, dropped))
		s.ui.RestoreDraft(userText(target.msg.Content))
	} else if files {
		s.ui.Notice("the conversation is unchanged: the model is not told; files it saw differ now, so it must read them again before changing them")
	}
}

func (s *Session) currentTurn() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turn
}

// userText is a user message without the revert note Fido appended.
func userText(content string) string {
	if i := strings.Index(content, revertMarker); i >= 0 {
		return content[:i]
	}
	return content
}

// filesAfter lists the files changed from turn on.
func filesAfter(entries []workspace.UndoEntry, turn int) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range entries {
		if e.Turn >= turn && !seen[e.Path] {
			seen[e.Path] = true
			out = append(out, e.Path)
		}
	}
	return out
}

func turnLabel(m Message, files []string) string {
	label := text.ShortenTo(text.FirstLine(userText(m.Content)), 60)
	if t, err := time.Parse(time.RFC3339, m.Time); err == nil {
		label += "  · " + t.Local().Format("15:04")
	}
	switch {
	case len(files) == 0:
		label += "  · no file changes after it"
	case len(files) > 4:
		label += fmt.Sprintf("  · changed after it: %s +%d", strings.Join(files[:4], ", "), len(files)-4)
	default:
		label += "  · changed after it: " + strings.Join(files, ", ")
	}
	return label
}

// commandsAfter lists the bash_exec commands of msgs (their effects are not
// in the undo log).
func commandsAfter(msgs []Message) []string {
	var out []string
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.Name != "bash_exec" {
				continue
			}
			var a struct {
				Command string `json:"command"`
			}
			_ = json.Unmarshal([]byte(c.Arguments), &a)
			out = append(out, "`"+text.ShortenTo(strings.TrimSpace(a.Command), 80)+"`")
		}
	}
	return out
}
