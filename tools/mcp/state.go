package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/fido-nvim/fido/tools/permission"
	"github.com/fido-nvim/fido/tools/workspace"
)

// Files in the workspace's state directory (never in the workspace).
const (
	trustFile     = "mcp-trust.json"
	approvalsFile = "mcp-approvals.json"
)

// approvals answers whether a server tool may run without asking: auto
// approve patterns ("server/tool", "server/*"), this session's "always", and
// the workspace's remembered "always for this tool".
type approvals struct {
	mu        sync.Mutex
	auto      []string
	session   map[string]bool
	workspace map[string]bool
	path      string
	// rules, when set, hold the session and workspace approvals (and any
	// deny rule) as command rules; the older approvals file is still read.
	rules *permission.Store
}

func newApprovals(dir string, auto []string) *approvals {
	a := &approvals{auto: auto, session: map[string]bool{}, workspace: map[string]bool{}}
	if dir != "" {
		a.path = filepath.Join(dir, approvalsFile)
		if b, err := os.ReadFile(a.path); err == nil {
			var list []string
			if json.Unmarshal(b, &list) == nil {
				for _, k := range list {
					a.workspace[k] = true
				}
			}
		}
	}
	return a
}

func approvalKey(server, tool string) string { return server + "/" + tool }

// auto reports whether an auto_approve pattern covers the tool.
func (a *approvals) autoApproved(server, tool string) bool {
	for _, p := range a.auto {
		ps, pt, ok := strings.Cut(strings.TrimSpace(p), "/")
		if ok && ps == server && (pt == "*" || pt == tool) {
			return true
		}
	}
	return false
}

func (a *approvals) allowed(server, tool string) bool {
	if a.autoApproved(server, tool) {
		return true
	}
	if a.rules != nil && a.rules.DecideAction(permission.MCPRule(server, tool)).Verdict == permission.Run {
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	k := approvalKey(server, tool)
	return a.session[k] || a.workspace[k]
}

// refusedBy is the deny rule that refuses the tool, if any.
func (a *approvals) refusedBy(server, tool string) *permission.Rule {
	if a.rules == nil {
		return nil
	}
	if d := a.rules.DecideAction(permission.MCPRule(server, tool)); d.Verdict == permission.Refuse {
		return d.Rule
	}
	return nil
}

func (a *approvals) allowSession(server, tool string) {
	if a.rules != nil {
		_ = a.rules.Add(permission.Rule{Effect: permission.Allow, Command: permission.MCPRule(server, tool)}, permission.OriginSession)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.session[approvalKey(server, tool)] = true
}

// allowWorkspace remembers the tool for this workspace (and this session).
func (a *approvals) allowWorkspace(server, tool string) error {
	if a.rules != nil {
		return a.rules.Add(permission.Rule{Effect: permission.Allow, Command: permission.MCPRule(server, tool)}, permission.OriginWorkspace)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	k := approvalKey(server, tool)
	a.session[k], a.workspace[k] = true, true
	if a.path == "" {
		return nil
	}
	// Merge with what is on disk, so two Fido processes do not drop each other's entries.
	if b, err := os.ReadFile(a.path); err == nil {
		var list []string
		if json.Unmarshal(b, &list) == nil {
			for _, k := range list {
				a.workspace[k] = true
			}
		}
	}
	list := make([]string, 0, len(a.workspace))
	for k := range a.workspace {
		list = append(list, k)
	}
	sort.Strings(list)
	b, _ := json.Marshal(list)
	if err := os.MkdirAll(filepath.Dir(a.path), 0o755); err != nil {
		return err
	}
	return workspace.WriteFileAtomic(a.path, b, 0o644)
}
