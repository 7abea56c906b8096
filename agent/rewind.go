package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/fido-nvim/fido/tools"
	textfmt "github.com/fido-nvim/fido/tools/text"
	"github.com/fido-nvim/fido/tools/workspace"
)

// /rewind's second question: what to rewind. RewindChoices lists them in
// the order shown, from the one that restores the least (a stray <CR>
// changes nothing) to the one that restores the most.
const (
	RewindCancel = "Cancel"
	RewindConv   = "Conversation only"
	RewindFiles  = "Files only"
	RewindBoth   = "Conversation and files"
)

// RewindChoices are /rewind's second question, in this order.
var RewindChoices = []string{RewindCancel, RewindConv, RewindFiles, RewindBoth}

// userTurn is a user message /rewind can go back to.
type userTurn struct {
	index int // in the conversation
	msg   Message
}

// cmdRewind handles /rewind: pick a user message, then what to rewind.
func cmdRewind(s *Session, _ string) {
	if s.slot.busy() {
		s.screen.Error("/rewind: a turn is running; cancel it first")
		return
	}
	msgs := s.hist.snapshot()
	id, _ := s.hist.ident()
	var turns []userTurn
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleUser && msgs[i].Turn > 0 {
			turns = append(turns, userTurn{i, msgs[i]})
		}
	}
	if len(turns) == 0 {
		s.screen.Notice("/rewind: no message to go back to yet")
		return
	}
	entries, _ := s.trust.changesOf(id, true)
	labels := make([]string, len(turns))
	for i, t := range turns {
		labels[i] = turnLabel(t.msg, filesAfter(entries, t.msg.Turn))
	}
	ctx := context.Background()
	idx, err := s.prompt.Select(ctx, "Rewind to just before which message?", labels)
	if err != nil || idx < 0 || idx >= len(turns) {
		s.screen.Notice("rewind cancelled")
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
	first := textfmt.ShortenTo(textfmt.FirstLine(userText(target.msg.Content)), 50)
	mode, err := s.askRewind(ctx, first, userText(target.msg.Content), preview, plan, cmds)
	if err != nil || mode < 0 || mode >= len(RewindChoices) || RewindChoices[mode] == RewindCancel {
		s.screen.Notice("rewind cancelled")
		return
	}
	choice := RewindChoices[mode]
	files, conv := choice == RewindBoth || choice == RewindFiles, choice == RewindBoth || choice == RewindConv
	if files && s.cfg.Workspace != nil {
		s.screen.Notice("rewind: " + preview)
		conv, turn := s.hist.ident()
		tag := workspace.UndoEntry{Conv: conv, Turn: turn}
		done, failed := s.cfg.Workspace.ApplyRewind(ctx, plan, tag)
		switch {
		case len(done) > 0:
			s.screen.Notice("rewind: " + strings.Join(done, ", "))
		case len(failed) == 0:
			s.screen.Notice("rewind: no file needed restoring")
		}
		if len(failed) > 0 {
			s.screen.Error("rewind: could not restore " + strings.Join(failed, "; "))
		}
	}
	if conv {
		dropped := 0
		if !s.slot.idle(func() {
			dropped = s.hist.cut(target.index)
			s.trust.forget()
		}) {
			s.screen.Error("/rewind: a turn started meanwhile; the conversation was not rewound")
			return
		}
		// The model's picture of these files is older now: it reads them
		// again before overwriting them.
		for _, e := range after {
			s.files.Forget(e.Path)
		}
		s.screen.Notice(fmt.Sprintf("rewound the conversation to before “%s” (%d messages dropped); the plan is left as it is", first, dropped))
		s.restoreDraft(userText(target.msg.Content))
	} else if files {
		s.screen.Notice("the conversation is unchanged: the model is not told; files it saw differ now, so it must read them again before changing them")
	}
}

// askRewind asks what to rewind. A UI that shows a question's detail gets
// the whole message and every file and command as one (nothing is cut at
// the picker's width); others get it all in the prompt.
func (s *Session) askRewind(ctx context.Context, first, text, preview string, plan workspace.RewindPlan, cmds []string) (int, error) {
	a, ok := s.prompt.(tools.Asker)
	if !ok {
		return s.prompt.Select(ctx, fmt.Sprintf("Rewind to before “%s” (%s)", first, preview), RewindChoices)
	}
	var d strings.Builder
	d.WriteString("The conversation goes back to just before this message (its text returns to the input):\n")
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		d.WriteString("  " + l + "\n")
	}
	d.WriteString("\nFiles that \"Files only\" and \"Conversation and files\" restore:\n")
	if len(plan.Steps) == 0 {
		d.WriteString("  none\n")
	}
	for _, st := range plan.Steps {
		n := st.Path
		switch {
		case st.Dir:
			n += "/ (remove)"
		case !st.Exists:
			n += " (delete)"
		}
		d.WriteString("  " + n + "\n")
	}
	if len(plan.Skipped) > 0 {
		d.WriteString("Skipped (never overwritten):\n")
		for _, sk := range plan.Skipped {
			d.WriteString("  " + sk + "\n")
		}
	}
	if len(cmds) > 0 {
		d.WriteString("\nCommands ran after it; their changes cannot be restored:\n")
		for _, c := range cmds {
			d.WriteString("  " + c + "\n")
		}
	}
	return a.Ask(ctx, tools.Question{
		Prompt:     fmt.Sprintf("Rewind to before “%s”?", first),
		Items:      RewindChoices,
		Safe:       0,
		Detail:     strings.TrimRight(d.String(), "\n"),
		DetailInfo: []string{"/rewind"},
	})
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
	label := textfmt.ShortenTo(textfmt.FirstLine(userText(m.Content)), 60)
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
			out = append(out, "`"+textfmt.ShortenTo(strings.TrimSpace(a.Command), 80)+"`")
		}
	}
	return out
}

// cmdEdits runs /edits [auto|review].
func cmdEdits(s *Session, arg string) {
	switch arg {
	case "":
		s.screen.Notice("edits: " + s.trust.mode() + " (/edits auto applies Fido's file changes at once, /edits review asks first)")
		return
	case EditsAuto, EditsReview:
	default:
		s.screen.Error(fmt.Sprintf("/edits: unknown mode %q (use /edits auto or /edits review)", arg))
		return
	}
	s.trust.setMode(arg)
	s.screen.Info(s.info())
	if arg == EditsReview {
		s.screen.Notice("edits: review — every patch, rm and rmdir is shown and waits for your approval")
	} else {
		s.screen.Notice("edits: auto — Fido's file changes apply at once (:FidoReview shows them afterwards)")
	}
}

// Review handles :FidoReview [all] and :FidoRevert[!] [reason].
func (s *Session) Review(req ReviewRequest) {
	if s.trust.ws == nil || s.trust.ws.Undo == nil {
		s.screen.Notify("Fido: reviewing changes needs the undo log, which is not available", LevelWarn)
		return
	}
	if s.editor == nil {
		s.screen.Notify("Fido: reviewing changes needs an editor", LevelWarn)
		return
	}
	id, turn := s.hist.ident()
	switch req.Action {
	case "open":
		s.trust.openReview(req.All, id, s.screen, s.editor)
	case "revert":
		s.trust.revertFromReview(req, workspace.UndoEntry{Conv: id, Turn: turn}, s.slot.busy(), s.screen, s.editor)
	default:
		s.screen.Notify(fmt.Sprintf("Fido: unknown review action %q", req.Action), LevelError)
	}
}
