package agent

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Command is a local slash command: it runs without a model turn.
type Command struct {
	Name string
	Args string
	Help string
}

// Commands lists the slash commands in the order completion shows them.
var Commands = []Command{
	{Name: "/plan", Args: "[clear]", Help: "show the plan window; /plan clear clears the plan"},
	{Name: "/suspend", Args: "[description]", Help: "save this conversation as a snapshot"},
	{Name: "/recall", Help: "restore a saved snapshot (the workspace plan is kept)"},
	{Name: "/undo", Args: "[revert]", Help: "show the mutation log; /undo revert undoes Fido's newest change"},
	{Name: "/rewind", Help: "go back to before one of your messages: the conversation, Fido's file changes, or both"},
	{Name: "/edits", Args: "[auto|review]", Help: "show or set the edit mode: review shows each file change and asks first"},
	{Name: "/reasoning", Args: "[minimal|low|medium|high|default]", Help: "show or set the reasoning effort"},
	{Name: "/new", Help: "start a new conversation (the current one stays saved)"},
	{Name: "/sessions", Args: "[delete]", Help: "resume a saved conversation of this workspace; /sessions delete deletes one"},
	{Name: "/rename", Args: "{title}", Help: "rename the current conversation"},
	{Name: "/fork", Help: "copy the current conversation into a new one and continue there"},
	{Name: "/model", Args: "[id|refresh]", Help: "pick or set the model (the endpoint's list; the cache starts cold)"},
	{Name: "/mode", Args: "[plan|default|auto-edit]", Help: "show or set the mode: plan only reads and plans; auto-edit applies edits without review"},
	{Name: "/permissions", Help: "edit the command rules in a buffer (delete a line and :w)"},
	{Name: "/compact", Args: "[instructions]", Help: "replace the older turns with a summary the model writes (the full history stays saved)"},
	{Name: "/reload-instructions", Help: "re-read AGENTS.md (or CLAUDE.md) into the system message; the provider's cache prefix changes"},
	{Name: "/help", Help: "list the commands"},
	{Name: "/quit", Help: "cancel any turn and close Fido's windows"},
}

// ReasoningLevels are the accepted efforts; "default" clears the setting.
var ReasoningLevels = []string{"minimal", "low", "medium", "high"}

func (s *Session) command(text string) {
	name, arg, _ := strings.Cut(strings.TrimSpace(text), " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/plan":
		switch arg {
		case "":
			s.ui.ShowPlan(false)
			if s.cfg.Plans == nil || s.cfg.Plans.Current() == nil {
				s.ui.Notice("no plan yet")
			}
		case "clear":
			s.ClearPlan()
		default:
			s.ui.Error(fmt.Sprintf("/plan: unknown argument %q (use /plan or /plan clear)", arg))
		}
	case "/reasoning":
		s.setReasoning(arg)
	case "/edits":
		s.setEdits(arg)
	case "/rewind":
		s.rewind()
	case "/suspend":
		s.suspend(arg)
	case "/recall":
		s.recall()
	case "/undo":
		switch arg {
		case "":
			s.showUndo()
		case "revert":
			s.revertLast()
		default:
			s.ui.Error(fmt.Sprintf("/undo: unknown argument %q (use /undo or /undo revert)", arg))
		}
	case "/new":
		s.newConversation()
	case "/sessions":
		s.sessions(arg)
	case "/rename":
		s.rename(arg)
	case "/fork":
		s.fork()
	case "/compact":
		s.compactNow(arg)
	case "/mode":
		s.setMode(arg)
	case "/model":
		s.setModel(arg)
	case "/permissions":
		s.showPermissions()
	case "/reload-instructions":
		s.reloadInstructions()
	case "/help":
		var b strings.Builder
		b.WriteString("commands:")
		list := Commands
		if s.cfg.Commands != nil {
			list = append(append([]Command(nil), Commands...), s.cfg.Commands.Commands()...)
		}
		for _, c := range list {
			b.WriteString("\n  " + helpLine(c.Name, c.Args, c.Help))
		}
		b.WriteString("\nmentions: @path, @path:12-40, @buffer, @diagnostics, @diagnostics:all, @quickfix, @selection")
		if cmds, problems := s.userCommands(); len(cmds) > 0 {
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
		s.ui.Notice(b.String())
	case "/quit":
		s.Cancel()
		s.ui.Quit()
	default:
		if s.cfg.Commands != nil && s.cfg.Commands.Handles(name) {
			go s.cfg.Commands.Run(name, arg)
			return
		}
		if c, ok := s.userCommand(strings.TrimPrefix(name, "/")); ok {
			s.submitMessage(c.Expand(arg))
			return
		}
		s.ui.Error(fmt.Sprintf("unknown command %s; /help lists the commands", name))
	}
}

// SlashCommands lists the built-in commands and then the user's own, for
// completion.
func (s *Session) SlashCommands() []Command {
	out := append([]Command(nil), Commands...)
	cmds, _ := s.userCommands()
	for _, c := range cmds {
		out = append(out, Command{Name: "/" + c.Name, Args: c.ArgumentHint, Help: c.Description})
	}
	if s.cfg.Commands != nil {
		out = append(out, s.cfg.Commands.Commands()...)
	}
	return out
}

// userCommand finds the Markdown command a submitted /name runs.
func (s *Session) userCommand(name string) (UserCommand, bool) {
	if s.cfg.UserCommand != nil {
		return s.cfg.UserCommand(name)
	}
	cmds, _ := s.userCommands()
	for _, c := range cmds {
		if c.Name == name {
			return c, true
		}
	}
	return UserCommand{}, false
}

func (s *Session) userCommands() ([]UserCommand, []string) {
	if s.cfg.UserCommands == nil {
		return nil, nil
	}
	return s.cfg.UserCommands()
}

// reloadInstructions rebuilds the system message from the instruction files
// as they are now. It changes messages[0], so it says that the provider's
// cache prefix starts over.
func (s *Session) reloadInstructions() {
	sys := s.cfg.SystemPrompt()
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		s.ui.Error("/reload-instructions: a turn is running; wait for it or cancel it first")
		return
	}
	changed := len(s.messages) > 0 && s.messages[0].Content != sys
	if changed {
		s.messages[0] = Message{Role: RoleSystem, Content: sys}
	}
	s.mu.Unlock()
	if !changed {
		s.ui.Notice("instructions unchanged; the system message stays as it was")
		return
	}
	s.ui.Notice("instructions reloaded into the system message; the provider's cache prefix changes, so the next request is read without cache")
}

func (s *Session) setReasoning(arg string) {
	s.mu.Lock()
	switch {
	case arg == "":
		cur := s.reasoning
		s.mu.Unlock()
		if cur == "" {
			cur = "model default"
		}
		s.ui.Notice("reasoning effort: " + cur)
		return
	case arg == "default":
		s.reasoning = ""
	case contains(ReasoningLevels, arg):
		s.reasoning = arg
	default:
		s.mu.Unlock()
		s.ui.Error(fmt.Sprintf("/reasoning: %q is not one of %s, default", arg, strings.Join(ReasoningLevels, ", ")))
		return
	}
	info := s.info()
	s.mu.Unlock()
	s.ui.Info(info)
	label := info.Reasoning
	if label == "" {
		label = "model default"
	}
	s.ui.Notice("reasoning effort: " + label)
}

func (s *Session) showUndo() {
	if s.cfg.Undo == nil {
		s.ui.Notice("the mutation log is not available")
		return
	}
	lines := s.cfg.Undo(10)
	if len(lines) == 0 {
		s.ui.Notice("the mutation log is empty")
		return
	}
	s.ui.Notice("newest mutations (view only):\n  " + strings.Join(lines, "\n  "))
}

// revertLast undoes the newest mutation and tells the model, so its picture
// of the workspace is not stale.
func (s *Session) revertLast() {
	if s.cfg.UndoRevert == nil {
		s.ui.Notice("reverting is not available")
		return
	}
	if s.Busy() {
		s.ui.Error("/undo revert: a turn is running; cancel it first")
		return
	}
	// Bounded: the editor is asked about unsaved buffers and may be busy.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	desc, err := s.cfg.UndoRevert(ctx)
	if err != nil {
		s.ui.Error("/undo revert: " + err.Error())
		if desc == "" {
			return
		}
	}
	s.ui.Notice("reverted: " + desc)
	note := Message{Role: RoleUser, Content: "[Fido] The user reverted your most recent file change with /undo revert: " + desc +
		". Earlier tool results about that file are out of date; read it again before relying on them."}
	s.mu.Lock()
	if s.running {
		s.pending = append(s.pending, note)
	} else {
		s.messages = append(s.messages, note)
	}
	s.mu.Unlock()
}

// Reasoning returns the current effort ("" = model default).
func (s *Session) Reasoning() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reasoning
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// helpLine is one /help line: "name args — help", leaving out what is empty.
func helpLine(name, args, help string) string {
	line := strings.TrimSpace(name + " " + strings.TrimSpace(args))
	if help = strings.TrimSpace(help); help != "" {
		line += " — " + help
	}
	return line
}
