package agent

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

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

// userCommands puts the Markdown commands into the command table: a
// command's text, filled with its arguments, goes out as the user's
// message.
type userCommands struct {
	// list finds them (looked up again at every use); lookup, when set,
	// finds the one a submitted /name runs, else list is searched.
	list   func() ([]UserCommand, []string)
	lookup func(name string) (UserCommand, bool)
	send   func(text string)
}

func (u userCommands) row(c UserCommand) SlashCommand {
	return SlashCommand{Command: Command{Name: "/" + c.Name, Args: c.ArgumentHint, Help: c.Description},
		Run: func(_, arg string) { u.send(c.Expand(arg)) }}
}

func (u userCommands) rows() ([]SlashCommand, []string) {
	if u.list == nil {
		return nil, nil
	}
	cmds, problems := u.list()
	out := make([]SlashCommand, len(cmds))
	for i, c := range cmds {
		out[i] = u.row(c)
	}
	return out, problems
}

func (u userCommands) find(name string) (SlashCommand, bool) {
	name = strings.TrimPrefix(name, "/")
	if u.lookup != nil {
		c, ok := u.lookup(name)
		return u.row(c), ok
	}
	if u.list != nil {
		cmds, _ := u.list()
		for _, c := range cmds {
			if c.Name == name {
				return u.row(c), true
			}
		}
	}
	return SlashCommand{}, false
}

// maxCommandFile bounds one command file.
const maxCommandFile = 64 << 10

// MaxUserCommands caps the Markdown commands Fido lists (completion, /help,
// dispatch): the first ones by folder and name. maxCommandEntries caps the
// directory entries one scan of a folder looks at. 50,000 command files
// made completion take 0.9 s while Neovim waited.
const (
	MaxUserCommands   = 500
	maxCommandEntries = 5000
)

// CommandDir is one folder of command files, read in order: an earlier
// folder's command wins over a later one of the same name.
type CommandDir struct {
	// Dir is the folder; names below it become commands.
	Dir string
	// Read reads a file below Dir (a workspace-confined reader for the
	// workspace's folders); nil reads with os.ReadFile-like confinement.
	Read FileReader
	// Walk lists the folder (the workspace sandbox's walk, which never
	// leaves the workspace nor blocks); nil is filepath.WalkDir. Stat is
	// the matching stat (nil: os.Stat).
	Walk func(root string, fn fs.WalkDirFunc) error
	Stat func(name string) (fs.FileInfo, error)
}

// maxStampedDirs bounds the folders whose modification time tells the
// index that a command file was added or removed (the files it read are
// stamped too, at most MaxUserCommands of them).
const maxStampedDirs = 256

// LoadUserCommands finds the command files of dirs (`*.md`, subfolders as
// `dir:name`), at most MaxUserCommands of them. Names that clash with a
// built-in command are left out and reported, as are unreadable files and
// the files beyond the cap (counted, not read).
func LoadUserCommands(dirs []CommandDir, builtin []Command) ([]UserCommand, []string) {
	cmds, problems, _ := scanCommands(dirs, builtin)
	return cmds, problems
}

// dirStamps are the modification times and sizes of the folders a scan
// listed (a missing one has the zero stamp) and of the files it read.
type dirStamps map[string]stamp

type stamp struct {
	mod  time.Time
	size int64
}

func stampOf(fi fs.FileInfo) stamp { return stamp{fi.ModTime(), fi.Size()} }

func (a stamp) same(b stamp) bool { return a.mod.Equal(b.mod) && a.size == b.size }

func scanCommands(dirs []CommandDir, builtin []Command) ([]UserCommand, []string, dirStamps) {
	stamps := dirStamps{}
	dirsStamped := 0
	taken := map[string]bool{}
	for _, c := range builtin {
		taken[strings.TrimPrefix(c.Name, "/")] = true
	}
	found := map[string]UserCommand{}
	var problems []string
	over := map[string]int{} // folder -> command files left out for the cap
	for _, d := range dirs {
		walk := d.Walk
		if walk == nil {
			walk = filepath.WalkDir
		}
		entries := 0
		_ = walk(d.Dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if p != d.Dir {
					problems = append(problems, fmt.Sprintf("%s: %v", p, err))
				} else {
					stamps[p] = stamp{}
				}
				return nil
			}
			if e.IsDir() && dirsStamped < maxStampedDirs {
				if fi, err := e.Info(); err == nil {
					stamps[p] = stampOf(fi)
					dirsStamped++
				}
			}
			if entries++; entries > maxCommandEntries {
				over[d.Dir] = -1 // more than the scan looks at
				return fs.SkipAll
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
			if len(found) >= MaxUserCommands {
				if over[d.Dir] >= 0 {
					over[d.Dir]++
				}
				return nil
			}
			data, err := readCommandFile(d, rel)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", p, err))
				return nil
			}
			if fi, err := e.Info(); err == nil {
				stamps[p] = stampOf(fi)
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
	if len(over) > 0 {
		problems = append(problems, capNote(dirs, over))
	}
	return out, problems, stamps
}

// changed reports whether a folder the scan listed or a file it read
// changed since (a file added, removed or edited, a folder made); a folder
// beyond maxStampedDirs counts as unchanged, the index's age covers it.
func (st dirStamps) changed(dirs []CommandDir) bool {
	stat := map[string]func(string) (fs.FileInfo, error){}
	for _, d := range dirs {
		stat[d.Dir] = d.Stat
		if stat[d.Dir] == nil {
			stat[d.Dir] = os.Stat
		}
	}
	for p, t := range st {
		f := os.Stat
		for dir, s := range stat {
			if p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) {
				f = s
				break
			}
		}
		fi, err := f(p)
		switch {
		case err != nil && !t.same(stamp{}), err == nil && !stampOf(fi).same(t):
			return true
		}
	}
	return false
}

// capNote says which folders had command files beyond the cap.
func capNote(dirs []CommandDir, over map[string]int) string {
	var parts []string
	for _, d := range dirs {
		switch n, ok := over[d.Dir]; {
		case !ok:
		case n < 0:
			parts = append(parts, fmt.Sprintf("%s (more than %d entries; the rest were not looked at)", d.Dir, maxCommandEntries))
		default:
			parts = append(parts, fmt.Sprintf("%s (%d left out)", d.Dir, n))
		}
	}
	return fmt.Sprintf("Fido lists at most %d custom commands, the first by folder and name; more were found in %s", MaxUserCommands, strings.Join(parts, ", "))
}

// CommandIndex keeps the Markdown commands found by the latest scan, so
// completion (a request Neovim waits for) never waits for a scan of a large
// folder: List answers from the index, rescanning when a folder changed
// (waiting for that only briefly: a small folder is rescanned within that
// time, so a new file shows at once) or in the background when the index
// is older than a second.
type CommandIndex struct {
	dirs    []CommandDir
	builtin []Command
	// Notify, when set, hears once that the cap left commands out.
	Notify func(msg string)

	mu       sync.Mutex
	cmds     []UserCommand
	problems []string
	stamps   dirStamps
	at       time.Time     // when the latest scan ended
	scan     chan struct{} // closed when the scan in flight ends; nil when none runs
	scanned  bool
	told     bool
}

// Freshness of the index.
const (
	commandIndexAge  = time.Second
	commandIndexWait = 30 * time.Millisecond
)

// NewCommandIndex indexes the command files of dirs (see LoadUserCommands).
func NewCommandIndex(dirs []CommandDir, builtin []Command) *CommandIndex {
	return &CommandIndex{dirs: dirs, builtin: builtin}
}

// Refresh starts a scan in the background (at start, so the first
// completion finds the index ready).
func (x *CommandIndex) Refresh() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.startLocked()
}

func (x *CommandIndex) startLocked() chan struct{} {
	if x.scan != nil {
		return x.scan
	}
	done := make(chan struct{})
	x.scan = done
	go func() {
		cmds, problems, stamps := scanCommands(x.dirs, x.builtin)
		x.mu.Lock()
		x.cmds, x.problems, x.stamps, x.at, x.scanned, x.scan = cmds, problems, stamps, time.Now(), true, nil
		note := ""
		if !x.told && len(problems) > 0 && strings.HasPrefix(problems[len(problems)-1], "Fido lists at most") {
			x.told, note = true, problems[len(problems)-1]
		}
		notify := x.Notify
		x.mu.Unlock()
		close(done)
		if note != "" && notify != nil {
			notify(note)
		}
	}()
	return done
}

// List returns the indexed commands and the problems of their scan. It
// is called while Neovim waits (completion): when a listed folder changed
// (a command file added or removed) it rescans, waiting at most
// commandIndexWait; an index older than commandIndexAge is rescanned in
// the background (an edited file), the current one answered meanwhile.
func (x *CommandIndex) List() ([]UserCommand, []string) {
	x.mu.Lock()
	var wait chan struct{}
	switch {
	case !x.scanned:
		wait = x.startLocked()
	case x.scan == nil && x.stamps.changed(x.dirs):
		wait = x.startLocked()
	case time.Since(x.at) > commandIndexAge:
		x.startLocked()
	}
	x.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-time.After(commandIndexWait):
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.cmds, x.problems
}

// Find returns the command called name (without its slash). It runs off
// Neovim's path (a submitted command), so it waits for a scan: the first,
// and a fresh one when name is not in the index (a file just written).
func (x *CommandIndex) Find(name string) (UserCommand, bool) {
	for attempt := 0; attempt < 2; attempt++ {
		x.mu.Lock()
		var wait chan struct{}
		if !x.scanned || attempt == 1 || x.scan != nil {
			wait = x.startLocked()
		}
		x.mu.Unlock()
		if wait != nil {
			<-wait
		}
		x.mu.Lock()
		cmds := x.cmds
		x.mu.Unlock()
		for _, c := range cmds {
			if c.Name == name {
				return c, true
			}
		}
	}
	return UserCommand{}, false
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
