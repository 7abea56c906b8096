package permission

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/fido-nvim/fido/tools/confined"
	"github.com/fido-nvim/fido/tools/workspace"
)

// maxPermissionsFile bounds the workspace rules file read back.
const maxPermissionsFile = 1 << 20

// Store holds the command rules bash_exec decides with: the user's
// from setup() (config), the workspace's (saved in the state directory) and
// this session's. It is safe for concurrent use; workspace rules are read
// again under the state lock before every change, so two Neovims on one
// workspace never lose each other's rules.
type Store struct {
	mu        sync.Mutex
	path      string // "" keeps workspace rules in memory only
	config    []Rule
	workspace []Rule
	session   []Rule
	// seen is the workspace file as last read (size and time), so a
	// decision re-reads it only after another process changed it.
	seen workspace.FileStamp
}

type permissionsFile struct {
	Version int    `json:"version"`
	Rules   []Rule `json:"rules"`
}

// OpenStore loads the workspace rules at path (missing: none). A
// corrupt file is moved aside and reported in notice, never silently
// emptied. config are the user's rules from setup().
func OpenStore(path string, config []Rule) (*Store, string) {
	p := &Store{path: path}
	for _, r := range config {
		r.Origin = OriginConfig
		p.config = append(p.config, r)
	}
	if path == "" {
		return p, ""
	}
	var notice string
	_ = workspace.WithStateLock(path, func() error {
		rules, err := p.readLocked()
		if err != nil {
			notice = err.Error()
		}
		p.workspace = rules
		return nil
	})
	return p, notice
}

// readLocked reads the workspace rules; a corrupt file is moved aside.
func (p *Store) readLocked() ([]Rule, error) {
	data, err := confined.ReadPath(p.path, maxPermissionsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var f permissionsFile
	if err == nil {
		err = json.Unmarshal(data, &f)
	}
	if err == nil {
		for _, r := range f.Rules {
			if verr := r.Validate(); verr != nil {
				err = verr
				break
			}
		}
	}
	if err != nil {
		aside := p.path + ".corrupt-" + time.Now().UTC().Format("20060102T150405")
		if rerr := os.Rename(p.path, aside); rerr != nil {
			return nil, fmt.Errorf("the workspace's command rules %s are unreadable (%v) and could not be moved aside (%v); no workspace rules apply", p.path, err, rerr)
		}
		return nil, fmt.Errorf("the workspace's command rules were unreadable (%v); the file was moved to %s and no workspace rules apply", err, aside)
	}
	for i := range f.Rules {
		f.Rules[i].Origin = OriginWorkspace
	}
	return f.Rules, nil
}

// update re-reads the workspace rules under the lock, applies change and
// writes them back atomically.
func (p *Store) update(change func([]Rule) []Rule) error {
	if p.path == "" {
		p.workspace = change(p.workspace)
		return nil
	}
	return workspace.WithStateLock(p.path, func() error {
		cur, err := p.readLocked()
		if err != nil {
			return err
		}
		next := change(cur)
		b, err := json.MarshalIndent(permissionsFile{Version: 1, Rules: next}, "", "  ")
		if err != nil {
			return err
		}
		if err := workspace.WriteStateFile(p.path, b, 0o600); err != nil {
			return err
		}
		p.workspace = next
		return nil
	})
}

// Add stores a rule for the session or the workspace.
func (p *Store) Add(r Rule, origin Origin) error {
	if err := r.Validate(); err != nil {
		return err
	}
	r.Origin = origin
	p.mu.Lock()
	defer p.mu.Unlock()
	if origin == OriginSession {
		p.session = appendRule(p.session, r)
		return nil
	}
	return p.update(func(rs []Rule) []Rule { return appendRule(rs, r) })
}

// appendRule adds r unless the same rule is there. An allow rule for the
// same command as one already there is merged into it: the widenings add
// up (`allow git push` then `… with network` is one rule with network).
func appendRule(rs []Rule, r Rule) []Rule {
	for i, have := range rs {
		if have.Effect != r.Effect || have.Command != r.Command || have.Exact != r.Exact || have.Script != r.Script {
			continue
		}
		if r.Effect == Allow {
			out := append([]Rule(nil), rs...)
			out[i].Widening = have.Widening.Union(r.Widening)
			return out
		}
		return rs
	}
	return append(rs, r)
}

// All lists every rule with its origin: config, workspace, session.
func (p *Store) All() []Rule {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refreshLocked()
	out := append([]Rule(nil), p.config...)
	out = append(out, p.workspace...)
	return append(out, p.session...)
}

// refreshLocked re-reads the workspace rules when the file changed since
// they were read (another Neovim added one); p.mu is held.
func (p *Store) refreshLocked() {
	if p.path == "" {
		return
	}
	st := workspace.StampOf(p.path) // list_files' change check
	if st == p.seen {
		return
	}
	_ = workspace.WithStateLock(p.path, func() error {
		if rs, err := p.readLocked(); err == nil {
			p.workspace = rs
		}
		p.seen = workspace.StampOf(p.path)
		return nil
	})
}

// Keep removes every session and workspace rule not in keep (the lines
// left in the /permissions buffer); config rules stay, they live in setup().
func (p *Store) Keep(keep []Rule) (removed int, err error) {
	has := func(r Rule) bool {
		for _, k := range keep {
			if k.same(r) && k.Origin == r.Origin {
				return true
			}
		}
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var session []Rule
	for _, r := range p.session {
		if has(r) {
			session = append(session, r)
		} else {
			removed++
		}
	}
	p.session = session
	err = p.update(func(rs []Rule) []Rule {
		var out []Rule
		for _, r := range rs {
			if has(r) {
				out = append(out, r)
			} else {
				removed++
			}
		}
		return out
	})
	return removed, err
}

// JSNetworkRule is the command a rule names to decide javascript_execute's
// network access: `allow javascript_execute network` runs snippets online
// without asking, `deny javascript_execute network` runs them offline.
const JSNetworkRule = "javascript_execute network"

// MCPRule is the command a rule names for an MCP tool: `allow mcp
// server/tool`; `deny mcp server` refuses every tool of that server.
func MCPRule(server, tool string) string { return "mcp " + server + "/" + tool }

// DecideAction decides a non-shell action named like a command (JSNetworkRule,
// MCPRule) with the same rules: Run, Refuse (with the rule) or Ask.
func (p *Store) DecideAction(action string) Decision {
	if p == nil {
		return Decision{Verdict: Ask}
	}
	return Checker{Rules: p.All()}.Decide(action)
}

// Checker decides command lines in root against every rule.
func (p *Store) Checker(root string) Checker {
	return Checker{Root: root, Rules: p.All()}
}
