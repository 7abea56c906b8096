package agent

import "strings"

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

// commandTable is every slash command a session knows: the built-in rows,
// a CommandSet's and the user's own, looked up at each use.
type commandTable struct {
	builtin []SlashCommand
	ext     CommandSet // nil: none
	user    userRows   // nil: none
}

// userRows are the user's own commands as rows (userCommands).
type userRows interface {
	// rows lists them, with the problems of finding them.
	rows() ([]SlashCommand, []string)
	// find finds the row a submitted /name runs.
	find(name string) (SlashCommand, bool)
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
	if t.user != nil {
		return t.user.find(name)
	}
	return SlashCommand{}, false
}

func (t *commandTable) extension() []SlashCommand {
	if t.ext == nil {
		return nil
	}
	return t.ext.Commands()
}

func (t *commandTable) userRows() ([]SlashCommand, []string) {
	if t.user == nil {
		return nil, nil
	}
	return t.user.rows()
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

// completion lists the built-in commands, the user's, then the
// CommandSet's.
func (t *commandTable) completion() []Command {
	out := listed(t.builtin)
	user, _ := t.userRows()
	out = append(out, listed(user)...)
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
	if user, problems := t.userRows(); len(user) > 0 {
		b.WriteString("\nyour commands (.fido/commands, ~/.config/fido/commands, .claude/commands):")
		for _, c := range listed(user) {
			b.WriteString("\n  " + helpLine(c.Name, c.Args, c.Help))
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
