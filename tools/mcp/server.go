package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fido-nvim/fido/tools/text"
)

// State is where a server is in its life.
type State string

const (
	StateStarting   State = "starting"
	StateReady      State = "ready"
	StateCrashed    State = "crashed" // exited; restarted at the next call
	StateFailed     State = "failed"
	StateUntrusted  State = "not trusted"
	StateNeverTrust State = "never trusted"
)

// MaxRestarts bounds how often a crashed server is restarted in one session.
const MaxRestarts = 3

// hostKeys are Fido's own secrets: a stdio server gets them only when its
// env names them.
var hostKeys = []string{"OPENROUTER_API_KEY", "TAVILY_API_KEY"}

// server is one configured MCP server and its live connection.
type server struct {
	cfg ServerConfig
	m   *Manager

	mu        sync.Mutex
	state     State
	reason    string
	session   *sdk.ClientSession
	cmd       *exec.Cmd
	tools     []*sdk.Tool
	prompts   []*sdk.Prompt
	changed   bool // the tool list changed since the last catalog
	restarts  int
	closing   bool
	asking    bool          // the trust question is open
	inCatalog bool          // a conversation's catalog holds this server's tools
	sessDone  chan struct{} // closed when the current session's connection ended
	ready     chan struct{} // closed when the current start finished
	stderr    *tailBuffer
}

func newServer(m *Manager, cfg ServerConfig) *server {
	s := &server{cfg: cfg, m: m, state: StateStarting, ready: make(chan struct{}),
		stderr: newTailBuffer(4096, func(line string) { m.logf("mcp %s: %s", cfg.Name, line) })}
	return s
}

// ConnectTimeout bounds one start (connect, initialize, list tools); a
// conversation waits only Options.StartTimeout for it.
const ConnectTimeout = 60 * time.Second

func (s *server) startBounded() {
	ctx, cancel := context.WithTimeout(context.Background(), ConnectTimeout)
	defer cancel()
	s.start(ctx)
}

// start connects and lists the tools; it records the outcome in the state.
func (s *server) start(ctx context.Context) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	s.state, s.reason = StateStarting, ""
	select {
	case <-s.ready:
		s.ready = make(chan struct{})
	default:
	}
	ready := s.ready
	s.mu.Unlock()
	defer close(ready)

	sess, cmd, tools, prompts, err := s.connect(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if cmd != nil {
			endGroup(cmd)
		}
		s.state, s.reason = StateFailed, s.describe(err)
		s.m.logf("mcp %s: failed: %s", s.cfg.Name, s.reason)
		s.m.changedState()
		return
	}
	if s.closing {
		_ = sess.Close()
		endGroup(cmd)
		return
	}
	s.session, s.cmd, s.tools, s.prompts = sess, cmd, tools, prompts
	s.state, s.reason = StateReady, ""
	s.m.logf("mcp %s: ready with %d tools", s.cfg.Name, len(tools))
	s.sessDone = make(chan struct{})
	go s.watch(sess, s.sessDone)
	if s.restarts == 0 {
		go s.m.serverReady(s, len(tools))
	}
}

// describe words a start or call failure, with the stderr tail of a stdio server.
func (s *server) describe(err error) string {
	msg := text.Collapse(err.Error())
	if tail := s.stderr.Tail(); tail != "" {
		msg += "; stderr: " + tail
	}
	return msg
}

// watch notices a connection that ended without Fido closing it.
func (s *server) watch(sess *sdk.ClientSession, done chan struct{}) {
	err := sess.Wait()
	close(done)
	s.mu.Lock()
	if s.session != sess || s.closing {
		s.mu.Unlock()
		return
	}
	endGroup(s.cmd)
	s.session, s.cmd = nil, nil
	reason := "the server exited"
	if err != nil && !errors.Is(err, sdk.ErrConnectionClosed) {
		reason += ": " + text.Collapse(err.Error())
	}
	s.crashedLocked(reason)
	s.mu.Unlock()
}

// crashedLocked marks the server crashed (restartable) or failed for good.
func (s *server) crashedLocked(reason string) {
	if tail := s.stderr.Tail(); tail != "" {
		reason += "; stderr: " + tail
	}
	if s.restarts >= MaxRestarts {
		s.state, s.reason = StateFailed, fmt.Sprintf("%s (crashed %d times; not restarted again this session)", reason, s.restarts+1)
	} else {
		s.state, s.reason = StateCrashed, reason
	}
	s.m.logf("mcp %s: %s: %s", s.cfg.Name, s.state, reason)
	s.m.changedState()
}

func (s *server) connect(ctx context.Context) (*sdk.ClientSession, *exec.Cmd, []*sdk.Tool, []*sdk.Prompt, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "fido", Version: s.m.cfg.Version}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			go s.refreshTools()
		},
	})
	var transport sdk.Transport
	var cmd *exec.Cmd
	switch {
	case s.m.cfg.Transport != nil: // tests: an in-process server
		transport = s.m.cfg.Transport(s.cfg)
	case s.cfg.Stdio() && s.m.sandboxed(s.cfg):
		var err error
		if cmd, err = s.sandboxedCommand(); err != nil {
			return nil, nil, nil, nil, err
		}
		transport = &sdk.CommandTransport{Command: cmd, TerminateDuration: time.Second}
	case s.cfg.Stdio():
		cmd = s.command()
		transport = &sdk.CommandTransport{Command: cmd, TerminateDuration: time.Second}
	default:
		transport = &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, MaxRetries: 2,
			HTTPClient: &http.Client{Transport: headerTransport{headers: s.cfg.Headers, base: http.DefaultTransport}}}
	}
	sess, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return nil, cmd, nil, nil, fmt.Errorf("cannot connect: %w", err)
	}
	tools, err := listTools(ctx, sess)
	if err != nil {
		_ = sess.Close()
		return nil, cmd, nil, nil, fmt.Errorf("cannot list tools: %w", err)
	}
	var prompts []*sdk.Prompt
	if init := sess.InitializeResult(); init != nil && init.Capabilities != nil && init.Capabilities.Prompts != nil {
		for p, err := range sess.Prompts(ctx, nil) {
			if err != nil {
				s.m.logf("mcp %s: cannot list prompts: %v", s.cfg.Name, err)
				break
			}
			prompts = append(prompts, p)
		}
	}
	return sess, cmd, tools, prompts, nil
}

func listTools(ctx context.Context, sess *sdk.ClientSession) ([]*sdk.Tool, error) {
	var out []*sdk.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// refreshTools re-reads the tool list after notifications/tools/list_changed.
// The new list joins the catalog at /mcp reload or the next conversation.
func (s *server) refreshTools() {
	s.mu.Lock()
	sess := s.session
	s.mu.Unlock()
	if sess == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.m.cfg.Options.CallTimeout)
	defer cancel()
	tools, err := listTools(ctx, sess)
	if err != nil {
		s.m.logf("mcp %s: cannot re-list tools: %v", s.cfg.Name, err)
		return
	}
	s.mu.Lock()
	if s.session == sess {
		s.tools, s.changed = tools, true
	}
	s.mu.Unlock()
	s.m.logf("mcp %s: tool list changed (%d tools)", s.cfg.Name, len(tools))
	s.m.toolsChanged(s.cfg.Name)
}

// command builds the stdio server's process: workspace root (or its cwd
// under it), the user's environment minus Fido's keys, under the guard in a
// process group of its own.
func (s *server) command() *exec.Cmd {
	return ownGroup(s.plainCommand(), s.m.cfg.Guard)
}

// plainCommand is the server's own command line, directory, environment
// and stderr.
func (s *server) plainCommand() *exec.Cmd {
	cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
	cmd.Dir = s.m.cfg.Root
	if s.cfg.Cwd != "" {
		cmd.Dir = s.cfg.Cwd
		if !filepath.IsAbs(cmd.Dir) {
			cmd.Dir = filepath.Join(s.m.cfg.Root, cmd.Dir)
		}
	}
	cmd.Env = serverEnv(s.m.environ(), s.cfg.Env)
	cmd.Stderr = s.stderr
	return cmd
}

// serverEnv is base without Fido's keys (unless env names them), plus env.
func serverEnv(base []string, env map[string]string) []string {
	out := make([]string, 0, len(base)+len(env))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, hk := range hostKeys {
			if k == hk {
				drop = true
			}
		}
		if _, named := env[k]; named {
			drop = true // replaced below
		}
		if !drop {
			out = append(out, kv)
		}
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// call runs one tool call, restarting a crashed server first.
func (s *server) call(ctx context.Context, tool string, args map[string]any) (*sdk.CallToolResult, error) {
	sess, err := s.live(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	done := s.sessDone
	s.mu.Unlock()
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	var wire *jsonrpc.Error
	// An error the server answered means it is alive; any other (EOF, a
	// closed connection) is a crash once the connection is seen to end.
	if err != nil && ctx.Err() == nil && !errors.As(err, &wire) && closedWithin(done, 500*time.Millisecond) {
		s.mu.Lock()
		if s.session == sess {
			endGroup(s.cmd)
			s.session, s.cmd = nil, nil
			s.crashedLocked("the server exited during the call")
		}
		reason := s.reason
		s.mu.Unlock()
		return nil, &crashError{server: s.cfg.Name, reason: reason}
	}
	return res, err
}

type crashError struct{ server, reason string }

func (e *crashError) Error() string {
	return fmt.Sprintf("MCP server %s crashed: %s", e.server, e.reason)
}

// closedWithin reports whether done is closed within d (at once when d is 0).
func closedWithin(done chan struct{}, d time.Duration) bool {
	if done == nil {
		return false
	}
	if d == 0 {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// live returns the connected session, restarting a crashed server (at most
// MaxRestarts times a session) and waiting for one still starting.
func (s *server) live(ctx context.Context) (*sdk.ClientSession, error) {
	s.mu.Lock()
	switch s.state {
	case StateReady:
		sess := s.session
		s.mu.Unlock()
		return sess, nil
	case StateCrashed:
		s.restarts++
		n := s.restarts
		s.state = StateStarting
		s.mu.Unlock()
		s.m.logf("mcp %s: restarting (%d of %d)", s.cfg.Name, n, MaxRestarts)
		sctx, cancel := context.WithTimeout(ctx, max(s.m.cfg.Options.StartTimeout, 10*time.Second))
		s.start(sctx)
		cancel()
		s.m.changedState()
		return s.live(ctx)
	case StateStarting:
		ready := s.ready
		s.mu.Unlock()
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		s.mu.Lock()
		if s.state == StateStarting {
			s.mu.Unlock()
			return nil, fmt.Errorf("MCP server %s is still starting", s.cfg.Name)
		}
		s.mu.Unlock()
		return s.live(ctx)
	}
	state, reason := s.state, s.reason
	s.mu.Unlock()
	if reason != "" {
		return nil, fmt.Errorf("MCP server %s is %s: %s", s.cfg.Name, state, reason)
	}
	return nil, fmt.Errorf("MCP server %s is %s", s.cfg.Name, state)
}

// close ends the connection and the server's process group.
func (s *server) close() {
	s.mu.Lock()
	s.closing = true
	sess, cmd := s.session, s.cmd
	s.session, s.cmd = nil, nil
	s.mu.Unlock()
	if sess != nil {
		done := make(chan struct{})
		go func() { _ = sess.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(300 * time.Millisecond): // the host is ending: do not wait long
		}
	}
	endGroup(cmd)
}

// headerTransport adds the configured headers to every HTTP request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
	}
	return h.base.RoundTrip(r)
}

// tailBuffer keeps the last bytes of a server's stderr and logs each line.
type tailBuffer struct {
	mu   sync.Mutex
	max  int
	buf  []byte
	line []byte
	logf func(string)
}

func newTailBuffer(n int, logLine func(string)) *tailBuffer {
	return &tailBuffer{max: n, logf: logLine}
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	t.line = append(t.line, p...)
	var lines []string
	for {
		i := strings.IndexByte(string(t.line), '\n')
		if i < 0 {
			break
		}
		lines = append(lines, strings.TrimRight(string(t.line[:i]), "\r"))
		t.line = t.line[i+1:]
	}
	if len(t.line) > t.max {
		lines = append(lines, string(t.line))
		t.line = nil
	}
	t.mu.Unlock()
	for _, l := range lines {
		if t.logf != nil {
			t.logf(l)
		}
	}
	return len(p), nil
}

// Tail is the last few lines of stderr, joined on one line and bounded.
func (t *tailBuffer) Tail() string {
	t.mu.Lock()
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	s := strings.ToValidUTF8(string(b), "")
	t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	out := text.Collapse(strings.Join(lines, " | "))
	if r := []rune(out); len(r) > 600 {
		out = "…" + string(r[len(r)-600:])
	}
	return out
}
