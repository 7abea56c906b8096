package agent

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Command is a slash command as /help and completion show it.
type Command struct {
	Name string
	Args string
	Help string
}

// SlashCommand is one row of the command table that /help, completion and
// dispatch all read. The built-in commands, a CommandSet's and the user's
// Markdown commands all take this shape.
type SlashCommand struct {
	Command
	// Async commands wait for the user (a picker) or the model, so they run
	// on their own goroutine; the others run in order with the messages
	// around them, so a message sent right after /undo revert or /plan
	// clear sees their effect.
	Async bool
	// Prefix makes the row run every command whose name starts with Name
	// (/mcp: runs /mcp:<server>:<prompt>); it is not listed itself, the
	// commands it runs are.
	Prefix bool
	// Run runs the command: name as typed, arg the text after it.
	Run func(name, arg string)
}

// CommandSet is a group of slash commands a feature outside the core adds
// (/mcp …), listed after the built-in ones.
type CommandSet interface {
	// Commands returns the rows (they may change over time).
	Commands() []SlashCommand
}

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

// commandTable is every slash command a session knows: the built-in rows,
// the CommandSet's and the user's Markdown commands, looked up at each use.
type commandTable struct {
	builtin []SlashCommand
	ext     CommandSet // nil: none
	// list and lookup find the user's commands (nil: none); a user
	// command's text goes out through send as a message.
	list   func() ([]UserCommand, []string)
	lookup func(name string) (UserCommand, bool)
	send   func(text string)
}

func newCommandTable(s *Session) *commandTable {
	t := &commandTable{ext: s.cfg.Commands, list: s.cfg.UserCommands, lookup: s.cfg.UserCommand, send: s.submitMessage}
	for _, c := range builtinCommands {
		run := c.run
		t.builtin = append(t.builtin, SlashCommand{Command: c.Command, Async: c.async, Run: func(_, arg string) { run(s, arg) }})
	}
	return t
}

// find returns the row that runs name: a built-in, the CommandSet's, then
// the user's.
func (t *commandTable) find(name string) (SlashCommand, bool) {
	for _, c := range t.builtin {
		if c.Name == name {
			return c, true
		}
	}
	for _, c := range t.extension() {
		if c.Name == name || c.Prefix && strings.HasPrefix(name, c.Name) {
			return c, true
		}
	}
	if c, ok := t.userCommand(strings.TrimPrefix(name, "/")); ok {
		return t.userRow(c), true
	}
	return SlashCommand{}, false
}

func (t *commandTable) extension() []SlashCommand {
	if t.ext == nil {
		return nil
	}
	return t.ext.Commands()
}

// listed drops the prefix rows (the commands they run are listed).
func listed(rows []SlashCommand) []Command {
	var out []Command
	for _, c := range rows {
		if !c.Prefix {
			out = append(out, c.Command)
		}
	}
	return out
}

// userRow is a Markdown command's row: its text, filled with the
// arguments, goes out as the user's message.
func (t *commandTable) userRow(c UserCommand) SlashCommand {
	return SlashCommand{Command: Command{Name: "/" + c.Name, Args: c.ArgumentHint, Help: c.Description},
		Run: func(_, arg string) { t.send(c.Expand(arg)) }}
}

func (t *commandTable) userCommands() ([]UserCommand, []string) {
	if t.list == nil {
		return nil, nil
	}
	return t.list()
}

// userCommand finds the Markdown command a submitted /name runs.
func (t *commandTable) userCommand(name string) (UserCommand, bool) {
	if t.lookup != nil {
		return t.lookup(name)
	}
	cmds, _ := t.userCommands()
	for _, c := range cmds {
		if c.Name == name {
			return c, true
		}
	}
	return UserCommand{}, false
}

// completion lists the built-in commands, the user's, then the
// CommandSet's.
func (t *commandTable) completion() []Command {
	out := listed(t.builtin)
	cmds, _ := t.userCommands()
	for _, c := range cmds {
		out = append(out, t.userRow(c).Command)
	}
	return append(out, listed(t.extension())...)
}

// help is /help's text: the built-in and the CommandSet's commands, the
// mentions, then the user's commands.
func (t *commandTable) help() string {
	var b strings.Builder
	b.WriteString("commands:")
	for _, c := range append(listed(t.builtin), listed(t.extension())...) {
		b.WriteString("\n  " + helpLine(c.Name, c.Args, c.Help))
	}
	b.WriteString("\nmentions: @path, @path:12-40, @buffer, @diagnostics, @diagnostics:all, @quickfix, @selection")
	if cmds, problems := t.userCommands(); len(cmds) > 0 {
		b.WriteString("\nyour commands (.fido/commands, ~/.config/fido/commands, .claude/commands):")
		for _, c := range cmds {
			b.WriteString("\n  " + helpLine("/"+c.Name, c.ArgumentHint, c.Description))
		}
		for _, p := range problems {
			if strings.HasPrefix(p, "Fido lists at most") {
				b.WriteString("\n  (" + p + ")")
			}
		}
	}
	return b.String()
}

// helpLine is one /help line: "name args — help", leaving out what is empty.
func helpLine(name, args, help string) string {
	line := strings.TrimSpace(name + " " + strings.TrimSpace(args))
	if help = strings.TrimSpace(help); help != "" {
		line += " — " + help
	}
	return line
}

// splitCommand splits "/name arg text" into its name and argument text.
func splitCommand(text string) (name, arg string) {
	name, arg, _ = strings.Cut(strings.TrimSpace(text), " ")
	return name, strings.TrimSpace(arg)
}

// command runs a /command on the calling goroutine, asynchronous or not
// (Submit decides where it runs).
func (s *Session) command(text string) {
	name, arg := splitCommand(text)
	c, ok := s.cmds.find(name)
	if !ok {
		s.screen.Error(fmt.Sprintf("unknown command %s; /help lists the commands", name))
		return
	}
	c.Run(name, arg)
}

// SlashCommands lists the built-in commands and then the user's own, for
// completion.
func (s *Session) SlashCommands() []Command { return s.cmds.completion() }

// The handlers of the commands that belong to no one concern; the others
// are beside their concern (edits.go, rewind.go, conversations.go, …).

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
	if s.Busy() {
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
