package agent

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fido-nvim/fido/tools/confined"
)

// UserCommand is a slash command defined by a Markdown file: its body is
// sent as the user message.
type UserCommand struct {
	// Name is the command without its slash: "review", "git:commit".
	Name         string
	Description  string
	ArgumentHint string
	Body         string
	// Source is the file it came from.
	Source string
}

// maxCommandFile bounds one command file.
const maxCommandFile = 64 << 10

// CommandDir is one folder of command files, read in order: an earlier
// folder's command wins over a later one of the same name.
type CommandDir struct {
	// Dir is the folder; names below it become commands.
	Dir string
	// Read reads a file below Dir (a workspace-confined reader for the
	// workspace's folders); nil reads with os.ReadFile-like confinement.
	Read FileReader
}

// LoadUserCommands finds the command files of dirs (`*.md`, subfolders as
// `dir:name`). Names that clash with a built-in command are left out and
// reported, as are unreadable files.
func LoadUserCommands(dirs []CommandDir, builtin []Command) ([]UserCommand, []string) {
	taken := map[string]bool{}
	for _, c := range builtin {
		taken[strings.TrimPrefix(c.Name, "/")] = true
	}
	found := map[string]UserCommand{}
	var problems []string
	for _, d := range dirs {
		_ = filepath.WalkDir(d.Dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if p != d.Dir {
					problems = append(problems, fmt.Sprintf("%s: %v", p, err))
				}
				return nil
			}
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") || !e.Type().IsRegular() {
				return nil
			}
			rel, _ := filepath.Rel(d.Dir, p)
			name := strings.ReplaceAll(strings.TrimSuffix(filepath.ToSlash(rel), ".md"), "/", ":")
			if !validCommandName(name) {
				return nil
			}
			if taken[name] {
				problems = append(problems, fmt.Sprintf("%s: /%s is a built-in command; the built-in wins", p, name))
				return nil
			}
			if _, dup := found[name]; dup {
				return nil
			}
			data, err := readCommandFile(d, rel)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", p, err))
				return nil
			}
			c := parseCommandFile(string(data))
			c.Name, c.Source = name, p
			found[name] = c
			return nil
		})
	}
	out := make([]UserCommand, 0, len(found))
	for _, c := range found {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, problems
}

func readCommandFile(d CommandDir, rel string) ([]byte, error) {
	if d.Read != nil {
		return d.Read(rel, maxCommandFile)
	}
	root, err := os.OpenRoot(d.Dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return confined.ReadFile(root, rel, maxCommandFile)
}

func validCommandName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == ':' || r == '.') {
			return false
		}
	}
	return true
}

// parseCommandFile reads optional front matter (description:,
// argument-hint:) and the body.
func parseCommandFile(text string) UserCommand {
	var c UserCommand
	text = strings.TrimPrefix(text, "\ufeff")
	if rest, ok := strings.CutPrefix(text, "---\n"); ok {
		if front, body, ok := strings.Cut(rest, "\n---"); ok {
			for _, line := range strings.Split(front, "\n") {
				k, v, ok := strings.Cut(line, ":")
				if !ok {
					continue
				}
				v = strings.Trim(strings.TrimSpace(v), `"'`)
				switch strings.TrimSpace(k) {
				case "description":
					c.Description = v
				case "argument-hint":
					c.ArgumentHint = v
				}
			}
			text = strings.TrimPrefix(strings.TrimPrefix(body, "\r"), "\n")
		}
	}
	c.Body = strings.TrimSpace(text)
	return c
}

// Expand fills the body with the command's arguments: $ARGUMENTS is the
// whole argument text, $1…$9 its words (empty when missing).
func (c UserCommand) Expand(args string) string {
	args = strings.TrimSpace(args)
	words := strings.Fields(args)
	out := strings.ReplaceAll(c.Body, "$ARGUMENTS", args)
	for i := 9; i >= 1; i-- {
		v := ""
		if i <= len(words) {
			v = words[i-1]
		}
		out = strings.ReplaceAll(out, "$"+strconv.Itoa(i), v)
	}
	return out
}
