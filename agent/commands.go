package agent

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// builtinCommand is a row of the built-in table; run gets the session.
type builtinCommand struct {
	Command
	async bool
	run   func(s *Session, arg string)
}

// builtinCommands are the built-in slash commands, in the order
// completion and /help show them.
var builtinCommands = []builtinCommand{
	{Command{"/plan", "[clear]", "show the plan window; /plan clear clears the plan"}, false, cmdPlan},
	{Command{"/suspend", "[description]", "save this conversation as a snapshot"}, true, cmdSuspend},
	{Command{"/recall", "", "restore a saved snapshot (the workspace plan is kept)"}, true, cmdRecall},
	{Command{"/undo", "[revert]", "show the mutation log; /undo revert undoes Fido's newest change"}, false, cmdUndo},
	{Command{"/rewind", "", "go back to before one of your messages: the conversation, Fido's file changes, or both"}, true, cmdRewind},
	{Command{"/edits", "[auto|review]", "show or set the edit mode: review shows each file change and asks first"}, false, cmdEdits},
	{Command{"/reasoning", "[minimal|low|medium|high|default]", "show or set the reasoning effort"}, false, cmdReasoning},
	{Command{"/new", "", "start a new conversation (the current one stays saved)"}, false, cmdNew},
	{Command{"/sessions", "[delete]", "resume a saved conversation of this workspace; /sessions delete deletes one"}, true, cmdSessions},
	{Command{"/rename", "{title}", "rename the current conversation"}, false, cmdRename},
	{Command{"/fork", "", "copy the current conversation into a new one and continue there"}, false, cmdFork},
	{Command{"/model", "[id|refresh]", "pick or set the model (the endpoint's list; the cache starts cold)"}, true, cmdModel},
	{Command{"/mode", "[plan|default|auto-edit]", "show or set the mode: plan only reads and plans; auto-edit applies edits without review"}, false, cmdMode},
	{Command{"/permissions", "", "edit the command rules in a buffer (delete a line and :w)"}, false, cmdPermissions},
	{Command{"/compact", "[instructions]", "replace the older turns with a summary the model writes (the full history stays saved)"}, true, cmdCompact},
	{Command{"/reload-instructions", "", "re-read AGENTS.md (or CLAUDE.md) into the system message; the provider's cache prefix changes"}, false, cmdReloadInstructions},
	{Command{"/help", "", "list the commands"}, false, cmdHelp},
	{Command{"/quit", "", "cancel any turn and close Fido's windows"}, false, cmdQuit},
}

// Commands lists the built-in slash commands in the order completion shows
// them (user commands may not take their names).
var Commands = func() []Command {
	out := make([]Command, len(builtinCommands))
	for i, c := range builtinCommands {
		out[i] = c.Command
	}
	return out
}()

// newCommandTable is s's command table: the built-in rows bound to s, the
// CommandSet's, the user's (their text goes out as s's message).
func newCommandTable(s *Session) *commandTable {
	t := &commandTable{ext: s.cfg.Commands,
		user: userCommands{list: s.cfg.UserCommands, lookup: s.cfg.UserCommand, send: s.submitMessage}}
	for _, c := range builtinCommands {
		run := c.run
		t.builtin = append(t.builtin, SlashCommand{Command: c.Command, Async: c.async, Run: func(_, arg string) { run(s, arg) }})
	}
	return t
}

// dispatch runs a /command: an Async row on its own goroutine unless
// inline, the others on the calling one.
func (s *Session) dispatch(text string, inline bool) {
	name, arg := splitCommand(text)
	c, ok := s.cmds.find(name)
	switch {
	case !ok:
		s.screen.Error(fmt.Sprintf("unknown command %s; /help lists the commands", name))
	case c.Async && !inline:
		go c.Run(name, arg)
	default:
		c.Run(name, arg)
	}
}

// command runs a /command on the calling goroutine, whatever its row says.
func (s *Session) command(text string) { s.dispatch(text, true) }

// The handlers of the commands that belong to no one concern; the others
// are beside theirs (conversations.go, model.go, permissions.go,
// rewind.go, suspend.go).

func cmdHelp(s *Session, _ string) { s.screen.Notice(s.cmds.help()) }

func cmdQuit(s *Session, _ string) {
	s.Cancel()
	if s.editor != nil {
		s.editor.Quit()
	}
}

func cmdPlan(s *Session, arg string) {
	switch arg {
	case "":
		if s.editor != nil {
			s.editor.ShowPlan(false)
		}
		if s.cfg.Plans == nil || s.cfg.Plans.Current() == nil {
			s.screen.Notice("no plan yet")
		}
	case "clear":
		s.ClearPlan()
	default:
		s.screen.Error(fmt.Sprintf("/plan: unknown argument %q (use /plan or /plan clear)", arg))
	}
}

func cmdUndo(s *Session, arg string) {
	switch arg {
	case "":
		showUndo(s)
	case "revert":
		revertLast(s)
	default:
		s.screen.Error(fmt.Sprintf("/undo: unknown argument %q (use /undo or /undo revert)", arg))
	}
}

func showUndo(s *Session) {
	if s.cfg.Undo == nil {
		s.screen.Notice("the mutation log is not available")
		return
	}
	lines := s.cfg.Undo(10)
	if len(lines) == 0 {
		s.screen.Notice("the mutation log is empty")
		return
	}
	s.screen.Notice("newest mutations (view only):\n  " + strings.Join(lines, "\n  "))
}

// revertLast undoes the newest mutation and tells the model, so its picture
// of the workspace is not stale.
func revertLast(s *Session) {
	if s.cfg.UndoRevert == nil {
		s.screen.Notice("reverting is not available")
		return
	}
	if s.slot.busy() {
		s.screen.Error("/undo revert: a turn is running; cancel it first")
		return
	}
	// Bounded: the editor is asked about unsaved buffers and may be busy.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	desc, err := s.cfg.UndoRevert(ctx)
	if err != nil {
		s.screen.Error("/undo revert: " + err.Error())
		if desc == "" {
			return
		}
	}
	s.screen.Notice("reverted: " + desc)
	s.addSynthetic(Message{Role: RoleUser, Content: "[Fido] The user reverted your most recent file change with /undo revert: " + desc +
		". Earlier tool results about that file are out of date; read it again before relying on them."})
}

// cmdReloadInstructions rebuilds the system message from the instruction
// files as they are now. It changes messages[0], so it says that the
// provider's cache prefix starts over.
func cmdReloadInstructions(s *Session, _ string) {
	sys := s.cfg.SystemPrompt()
	changed := false
	if !s.slot.idle(func() { changed = s.hist.setSystem(sys) }) {
		s.screen.Error("/reload-instructions: a turn is running; wait for it or cancel it first")
		return
	}
	if !changed {
		s.screen.Notice("instructions unchanged; the system message stays as it was")
		return
	}
	s.screen.Notice("instructions reloaded into the system message; the provider's cache prefix changes, so the next request is read without cache")
}

// cmdCompact runs /compact [instructions]: it holds the session like a
// turn (messages sent meanwhile are queued, <C-c> cancels it).
func cmdCompact(s *Session, instructions string) {
	var msgs []Message
	few := false
	tr := s.slot.begin("", func() bool {
		msgs = s.hist.snapshot()
		few = len(userTurnStarts(msgs)) <= keepRecentTurns
		return !few
	})
	switch {
	case few:
		s.screen.Notice(errNothingToCompact.Error())
		return
	case tr == nil:
		s.screen.Error("/compact: a turn is running; wait for it or cancel it first")
		return
	}
	defer tr.finish()
	tr.setState(StateThinking)
	s.screen.Notice("compacting: asking the model for a summary of the conversation…")
	err := s.compactWith(tr.ctx, msgs, instructions)
	cancelled := tr.ctx.Err() != nil
	queued := s.slot.end(tr, func() { s.hist.commit(nil) })
	tr.setState(StateIdle)
	if err != nil {
		if cancelled {
			s.screen.Notice("compaction cancelled; the conversation is unchanged")
		} else {
			s.screen.Error("compaction failed, the conversation is unchanged: " + DescribeError(err))
		}
	}
	if len(queued) > 0 {
		s.submitMessage(strings.Join(queued, "\n\n"))
	}
}
