package mcp

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/permission"
	"github.com/fido-nvim/fido/tools/sandbox"
	"github.com/fido-nvim/fido/tools/text"
)

// Config wires a Manager.
type Config struct {
	Options Options
	// Root is the workspace root: stdio servers start there.
	Root string
	// StateDir is the workspace's state directory (trust and approvals).
	StateDir string
	// Environ is the environment servers inherit (default os.Environ).
	Environ func() []string
	Logf    func(format string, args ...any)
	Version string
	// Notify shows one line in the transcript (warn: as a warning).
	Notify func(msg string, warn bool)
	// OnState is called after any server changes state (statusline marker).
	OnState func()
	// Rules, when set, are the command rules approvals go through (one
	// mechanism for every approval): `allow mcp server/tool`, `deny mcp
	// server`; "Always" choices add such rules.
	Rules *permission.Store
	// Guard is the fido executable, which runs each stdio server under its
	// guard (shell.GuardCommand) so that the server's whole process tree
	// ends with the host, even when the host is killed. "" runs servers
	// directly (their process group still ends when the host closes them).
	Guard string
	// Transport, when set, replaces every server's transport (tests).
	Transport func(ServerConfig) sdk.Transport
	// Sandbox is the OS sandbox policy for a stdio server that runs in it
	// (ServerConfig.Sandbox, or a project server trusted with the
	// sandbox as the default), with the network or not; an error (one
	// wrapping sandbox.ErrUnavailable where none is enforced) keeps the
	// server from starting. Nil: such servers do not start. The server's
	// guard (Guard, required) applies it and supervises the server.
	// env, when not nil, makes the server's environment fit the sandbox
	// (TMPDIR, the sandbox's build caches).
	Sandbox func(c ServerConfig, network bool) (pol sandbox.Policy, env func([]string) []string, err error)
}

// Manager owns every configured server, the trust decision for the
// project's servers and the approvals of tool calls.
type Manager struct {
	cfg       Config
	listMu    sync.Mutex // guards servers (replaced by Reload)
	servers   []*server  // sorted by name; read through list()
	approvals *approvals
	trust     *trustStore

	mu         sync.Mutex
	snapshots  int  // catalogs taken (conversations started or reloaded)
	pendingNew bool // a server came up or changed after the last catalog
	closed     bool
	prompter   tools.Prompter

	stateMu      sync.Mutex // guards the OnState worker
	stateDirty   bool
	stateRunning bool
}

// New builds the manager; nothing starts before Start.
func New(cfg Config) *Manager {
	if cfg.Environ == nil {
		cfg.Environ = os.Environ
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Notify == nil {
		cfg.Notify = func(string, bool) {}
	}
	if cfg.Options.StartTimeout == 0 {
		cfg.Options.StartTimeout = DefaultStartTimeout
	}
	if cfg.Options.CallTimeout == 0 {
		cfg.Options.CallTimeout = DefaultCallTimeout
	}
	m := &Manager{cfg: cfg}
	m.approvals = newApprovals(cfg.StateDir, cfg.Options.AutoApprove)
	m.approvals.rules = cfg.Rules
	m.trust = &trustStore{dir: cfg.StateDir, root: cfg.Root}
	m.servers = m.newServers(cfg.Options.Servers)
	return m
}

// newServers makes the servers of a configuration, sorted by name.
func (m *Manager) newServers(list []ServerConfig) []*server {
	out := make([]*server, 0, len(list))
	for _, sc := range list {
		out = append(out, newServer(m, sc))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].cfg.Name < out[j].cfg.Name })
	return out
}

// list is the current servers (a copy: Reload may replace them).
func (m *Manager) list() []*server {
	m.listMu.Lock()
	defer m.listMu.Unlock()
	return append([]*server(nil), m.servers...)
}

func (m *Manager) logf(format string, args ...any) { m.cfg.Logf(format, args...) }
func (m *Manager) environ() []string               { return m.cfg.Environ() }

// Empty reports whether no server is configured.
func (m *Manager) Empty() bool { return len(m.list()) == 0 }

// Start starts every server in parallel; a project's servers start only when
// the workspace trusts their entries as they are now (asked through p, for
// the new and changed ones only, when not). It returns at once.
func (m *Manager) Start(p tools.Prompter) {
	m.mu.Lock()
	m.prompter = p
	m.mu.Unlock()
	defer m.changedState()
	var project []*server
	for _, s := range m.list() {
		if s.cfg.Source == SourceProject {
			project = append(project, s)
			continue
		}
		go s.startBounded()
	}
	if len(project) == 0 {
		return
	}
	st := m.trust.load()
	if st.never {
		m.setState(project, StateNeverTrust, "this workspace is set to never start its .mcp.json servers (/mcp trust reset)")
		return
	}
	var ask []*server
	var why []string
	for _, s := range project {
		c := st.check(s.cfg, m.cfg.Root)
		if c.trusted {
			go s.startBounded()
			continue
		}
		ask, why = append(ask, s), append(why, c.why)
	}
	if len(ask) == 0 {
		return
	}
	if p == nil {
		m.setState(ask, StateUntrusted, "not trusted yet")
		return
	}
	// While the question is open, a conversation's first request waits
	// for the answer (bounded by the start timeout) as for a server starting.
	for i, s := range ask {
		s.mu.Lock()
		s.state, s.reason, s.asking = StateUntrusted, "waiting for the answer to the trust question ("+why[i]+")", true
		s.mu.Unlock()
	}
	go m.askTrust(p, project, ask, why, st.legacy)
}

func (m *Manager) setState(list []*server, st State, reason string) {
	for _, s := range list {
		s.mu.Lock()
		s.state, s.reason, s.asking = st, reason, false
		select {
		case <-s.ready:
		default:
			close(s.ready)
		}
		s.mu.Unlock()
	}
	m.changedState()
}

// Trust choices.
const (
	TrustStart = "Trust and start"
	TrustLater = "Not now"
	TrustNever = "Never for this workspace"
)

// trustChoices are the trust question's choices, least permissive first (a
// stray <CR> starts nothing and asks again at the next start).
var trustChoices = []string{TrustLater, TrustNever, TrustStart}

// askTrust asks about the servers of ask (why: new, or what changed) and
// starts them when trusted; project is every project server (the trusted
// others stay recorded).
func (m *Manager) askTrust(p tools.Prompter, project, ask []*server, why []string, legacy bool) {
	var names, blocks []string
	for i, s := range ask {
		names = append(names, fmt.Sprintf("%s (%s)", s.cfg.Name, why[i]))
		blocks = append(blocks, describeEntry(s.cfg, why[i]))
	}
	prompt := fmt.Sprintf("The project's .mcp.json wants to start MCP servers: %s. Start them?", joinShort(names, 400))
	info := []string{"MCP servers from .mcp.json in " + m.cfg.Root + ": each runs as a program, in the OS sandbox unless its entry says \"sandbox\": false",
		"the answer covers exactly these entries; any change to one (command, args, env, cwd, or a workspace file it runs) asks again"}
	if legacy {
		info = append(info, "an earlier Fido recorded only \"trusted\" for this workspace, not which commands; so it asks again")
	}
	q := tools.Question{
		Prompt:     fmt.Sprintf("Start the %d MCP server(s) this project's .mcp.json names? (shown above)", len(ask)),
		Items:      trustChoices,
		Safe:       0,
		Approval:   true,
		Detail:     strings.Join(blocks, "\n"),
		DetailInfo: append(info, fmt.Sprintf("start timeout %s", m.cfg.Options.StartTimeout)),
	}
	answer := ""
	if idx, err := tools.AskQuestion(context.Background(), p, q, prompt); err == nil && idx >= 0 && idx < len(q.Items) {
		answer = q.Items[idx]
	}
	switch answer {
	case TrustStart:
		keep := map[string]bool{}
		for _, s := range project {
			keep[s.cfg.Name] = true
		}
		list := make([]ServerConfig, len(ask))
		for i, s := range ask {
			list[i] = s.cfg
		}
		if err := m.trust.trust(list, keep); err != nil {
			m.cfg.Notify("MCP trust could not be saved: "+err.Error(), true)
		}
		for _, s := range ask {
			s.mu.Lock()
			s.state, s.reason, s.asking = StateStarting, "", false
			s.mu.Unlock()
			go s.startBounded()
		}
		m.changedState()
	case TrustNever:
		if err := m.trust.setNever(); err != nil {
			m.cfg.Notify("MCP trust could not be saved: "+err.Error(), true)
		}
		m.setState(ask, StateNeverTrust, "never for this workspace (/mcp trust reset)")
	default:
		m.setState(ask, StateUntrusted, "not trusted yet (asked again next start; /mcp trust reset)")
	}
}

// ResetTrust forgets the workspace's trust answers; the question comes
// again at the next start.
func (m *Manager) ResetTrust() error { return m.trust.reset() }

// changedState tells the UI a state changed and, when a conversation's
// catalog is already fixed, that new tools wait for /mcp reload.
// The callback runs on one goroutine at a time (callers may hold a server's
// lock), coalesced, and always once more after the newest change, so the
// last state reported is the current one.
func (m *Manager) changedState() {
	if m.cfg.OnState == nil {
		return
	}
	m.stateMu.Lock()
	defer m.stateMu.Unlock()
	m.stateDirty = true
	if m.stateRunning {
		return
	}
	m.stateRunning = true
	go func() {
		for {
			m.stateMu.Lock()
			if !m.stateDirty {
				m.stateRunning = false
				m.stateMu.Unlock()
				return
			}
			m.stateDirty = false
			m.stateMu.Unlock()
			m.cfg.OnState()
		}
	}()
}

// serverReady is called when a server has come up.
func (m *Manager) serverReady(s *server, n int) {
	m.mu.Lock()
	s.mu.Lock()
	late := m.snapshots > 0 && !m.closed && !s.inCatalog
	s.mu.Unlock()
	if late {
		m.pendingNew = true
	}
	m.mu.Unlock()
	m.changedState()
	if late {
		m.cfg.Notify(fmt.Sprintf("MCP server %s is ready with %d tools; they join at /mcp reload or the next conversation (the cached prompt prefix changes then)", s.cfg.Name, n), false)
	}
}

// toolsChanged is called after notifications/tools/list_changed.
func (m *Manager) toolsChanged(name string) {
	m.mu.Lock()
	m.pendingNew = true
	m.mu.Unlock()
	m.cfg.Notify(fmt.Sprintf("MCP server %s changed its tools; the change joins at /mcp reload or the next conversation (the cached prompt prefix changes then)", name), false)
}

// Catalog fixes the MCP tools of a conversation: it waits at most the start
// timeout for servers still starting, then adapts the tools of every ready
// server. Problems (invalid schemas, renamed duplicates) are returned as
// lines for the transcript.
func (m *Manager) Catalog(ctx context.Context) ([]tools.Tool, []string) {
	deadline := time.NewTimer(m.cfg.Options.StartTimeout)
	defer deadline.Stop()
	servers := m.list()
	for _, s := range servers {
		s.mu.Lock()
		ready, starting := s.ready, s.state == StateStarting || s.asking
		s.mu.Unlock()
		if !starting {
			continue
		}
		select {
		case <-ready:
		case <-deadline.C:
		case <-ctx.Done():
		}
	}
	// m.mu is held while collecting (lock order: m.mu, then a server's),
	// so serverReady sees either this catalog with the server in it, or none.
	var entries []catalogEntry
	m.mu.Lock()
	for _, s := range servers {
		s.mu.Lock()
		if s.state == StateReady || s.state == StateCrashed {
			for _, t := range s.tools {
				entries = append(entries, catalogEntry{server: s, tool: t})
			}
			s.changed, s.inCatalog = false, true
		}
		s.mu.Unlock()
	}
	m.snapshots++
	m.pendingNew = false
	m.mu.Unlock()
	adapted, problems := buildCatalog(m, entries)
	out := make([]tools.Tool, len(adapted))
	for i, t := range adapted {
		out[i] = t
	}
	return out, problems
}

// ServerStatus is one server's state for /mcp, health and the statusline.
type ServerStatus struct {
	Name     string `json:"name"`
	Source   string `json:"source"`
	File     string `json:"file,omitempty"`
	State    State  `json:"state"`
	Reason   string `json:"reason,omitempty"`
	Tools    int    `json:"tools"`
	Prompts  int    `json:"prompts"`
	Restarts int    `json:"restarts"`
}

// Status lists every server's state, sorted by name.
func (m *Manager) Status() []ServerStatus {
	servers := m.list()
	out := make([]ServerStatus, 0, len(servers))
	for _, s := range servers {
		s.mu.Lock()
		out = append(out, ServerStatus{Name: s.cfg.Name, Source: s.cfg.Source, File: s.cfg.File, State: s.state,
			Reason: s.reason, Tools: len(s.tools), Prompts: len(s.prompts), Restarts: s.restarts})
		s.mu.Unlock()
	}
	return out
}

// Failed lists the names of servers that failed (for the statusline marker).
func (m *Manager) Failed() []string {
	var out []string
	for _, st := range m.Status() {
		if st.State == StateFailed {
			out = append(out, st.Name)
		}
	}
	return out
}

// Close ends every connection and every stdio server's process group.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	m.mu.Unlock()
	closeAll(m.list())
}

// closeAll ends the servers (each one's whole process tree), in parallel.
func closeAll(list []*server) {
	var wg sync.WaitGroup
	for _, s := range list {
		wg.Add(1)
		go func() { defer wg.Done(); s.close() }()
	}
	wg.Wait()
}

// Reload restarts MCP from a configuration read again (servers: every
// source merged): each running server's whole process tree is ended, then
// the servers start as at Start — a project's only when their entries, as
// they are now, are trusted (asked through the prompter given to Start when
// not). A conversation takes their tools at its next catalog.
func (m *Manager) Reload(servers []ServerConfig) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	p := m.prompter
	m.mu.Unlock()
	fresh := m.newServers(servers)
	m.listMu.Lock()
	old := m.servers
	m.servers = fresh
	m.listMu.Unlock()
	closeAll(old)
	m.mu.Lock()
	closed := m.closed
	// No conversation has these servers' tools yet: their readiness is no
	// "late" news until the next catalog.
	m.snapshots, m.pendingNew = 0, false
	m.mu.Unlock()
	if closed { // Close ran meanwhile and may have missed them
		closeAll(fresh)
		return
	}
	m.logf("mcp: reloaded; %d servers configured", len(fresh))
	m.Start(p)
}

func (m *Manager) server(name string) *server {
	for _, s := range m.list() {
		if s.cfg.Name == name {
			return s
		}
	}
	return nil
}

func joinShort(items []string, n int) string {
	s := ""
	for i, it := range items {
		if i > 0 {
			s += ", "
		}
		s += it
	}
	return text.ShortenTo(s, n)
}
