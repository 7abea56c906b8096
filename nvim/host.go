package nvim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/neovim/go-client/nvim"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools"
)

// Backend is the agent session as the host drives it.
type Backend interface {
	Submit(text string) // returns at once; text may be a /command
	Cancel()            // cancel the running turn and any subagent
	Plan(arg string)    // :FidoPlan [arg]: "" shows+focuses the plan window, "clear" clears the plan
	// Review handles :FidoReview [all] and :FidoRevert[!] [reason].
	Review(req agent.ReviewRequest)
	Close()
}

// SlashCommand is one completion candidate for the input.
type SlashCommand struct {
	Name string `msgpack:"name"`
	Args string `msgpack:"args"`
	Help string `msgpack:"help"`
}

// CommandLister is a Backend that can list its slash commands, user-defined
// ones included.
type CommandLister interface {
	SlashCommands() []agent.Command
}

// RunConfig configures Run.
type RunConfig struct {
	In  io.Reader // the RPC stream: stdin
	Out io.Writer // and the real stdout (see ProtectStdout)
	// Logf logs to stderr (Lua appends it to fido.log).
	Logf func(format string, args ...any)
	// NewBackend is called once the connection is up.
	NewBackend func(ui *UI, editor tools.Editor) (Backend, error)
}

// ProtectStdout points os.Stdout at stderr, so a stray print cannot corrupt
// the RPC stream, and returns the real stdout for RunConfig.Out.
func ProtectStdout() (rpcOut *os.File) {
	out := os.Stdout
	os.Stdout = os.Stderr
	return out
}

// hello is what Lua answers to the host's handshake.
type hello struct {
	Dims EditorDims `msgpack:"dims"`
	Plan struct {
		MinWidth int     `msgpack:"min_width"`
		Width    float64 `msgpack:"width"`
		AutoShow *bool   `msgpack:"auto_show"`
	} `msgpack:"plan"`
}

// Run serves Neovim on cfg.In/cfg.Out until Neovim goes away (EOF) or ctx
// ends; it returns within a second of either.
func Run(ctx context.Context, cfg RunConfig) error {
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if cfg.NewBackend == nil {
		return errors.New("nvim.Run: NewBackend is nil")
	}
	closer := io.Closer(nopCloser{})
	if c, ok := cfg.Out.(io.Closer); ok {
		closer = c
	}
	v, err := nvim.New(cfg.In, cfg.Out, closer, logf)
	if err != nil {
		return fmt.Errorf("nvim.Run: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	h := &host{v: v, logf: logf, calls: make(chan func(Backend), 256), ready: make(chan struct{})}
	go h.work(ctx)
	h.prompts = newPrompts(func(code string, args ...any) error { return v.ExecLua(code, nil, args...) })
	h.ui = newUI(h.sendBatch, logf, h.prompts)
	if err := h.register(); err != nil {
		return err
	}

	served := make(chan error, 1)
	go func() { served <- v.Serve() }()

	startErr := make(chan error, 1)
	go func() { startErr <- h.start(cfg) }()

	var runErr error
	select {
	case runErr = <-served:
	case <-ctx.Done():
	case err := <-startErr:
		if err != nil {
			logf("fido: %v", err)
			runErr = err
			break
		}
		select {
		case runErr = <-served:
		case <-ctx.Done():
		}
	}
	cancel()
	h.shutdown()
	_ = v.Close()
	if errors.Is(runErr, io.EOF) {
		runErr = nil
	}
	return runErr
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

type host struct {
	v       *nvim.Nvim
	logf    func(string, ...any)
	ui      *UI
	prompts *prompts
	lsp     lspCalls

	calls chan func(Backend)
	ready chan struct{} // closed once the backend exists

	mu      sync.Mutex
	backend Backend
	stop    context.CancelFunc
	done    chan struct{}
}

// start completes the handshake, creates the backend and starts the flusher.
func (h *host) start(cfg RunConfig) error {
	chanID := h.v.ChannelID()
	var hi hello
	if err := h.v.ExecLua(`return require("fido.host").connected(...)`, &hi, chanID); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	h.ui.startLayout(hi.Dims, PlanOptions{MinWidth: hi.Plan.MinWidth, Width: hi.Plan.Width},
		hi.Plan.AutoShow == nil || *hi.Plan.AutoShow)

	b, err := cfg.NewBackend(h.ui, &Editor{v: h.v, lsp: &h.lsp, chanID: chanID})
	if err != nil {
		h.ui.Error(err.Error())
		for _, more := h.ui.flusher.flush(context.Background()); more; _, more = h.ui.flusher.flush(context.Background()) {
		}
		return fmt.Errorf("backend: %w", err)
	}
	fctx, stop := context.WithCancel(context.Background())
	h.mu.Lock()
	h.backend, h.stop, h.done = b, stop, make(chan struct{})
	done := h.done
	h.mu.Unlock()
	go func() {
		defer close(done)
		h.ui.flusher.run(fctx)
	}()
	close(h.ready)
	h.ui.flusher.wake()
	return nil
}

// shutdown closes the backend and stops the flusher (bounded: Run returns
// within a second of Neovim going away).
func (h *host) shutdown() {
	h.mu.Lock()
	b, stop, done := h.backend, h.stop, h.done
	h.backend = nil
	h.mu.Unlock()
	if stop != nil {
		stop()
	}
	if b != nil {
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			defer h.recover("close")
			b.Close()
		}()
		select {
		case <-closed:
		case <-time.After(500 * time.Millisecond):
			h.logf("fido: backend did not close within 500ms")
		}
	}
	if done != nil {
		select {
		case <-done:
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// sendBatch applies b in Neovim. Lua answers true when the transcript
// buffer no longer holds what Fido wrote (the user wiped or unloaded it):
// the next flush then sends every line.
func (h *host) sendBatch(ctx context.Context, b *Batch) error {
	var resync bool
	if err := h.v.ExecLua(`return require("fido.bridge").apply(...)`, &resync, b); err != nil {
		return err
	}
	if resync {
		h.ui.resyncTranscript()
	}
	return nil
}

func (h *host) recover(what string) {
	if r := recover(); r != nil {
		h.logf("fido: panic in %s: %v\n%s", what, r, debug.Stack())
	}
}

// withBackend queues f for the backend. One worker runs the calls in the
// order they arrived (notifications are ordered; a cancel must not overtake
// the submit before it), after the backend exists; the handler returns at once.
func (h *host) withBackend(what string, f func(Backend)) {
	call := func(b Backend) {
		defer h.recover(what)
		f(b)
	}
	select {
	case h.calls <- call:
	default:
		go func() { h.calls <- call }()
	}
}

// work runs queued backend calls once the backend is ready.
func (h *host) work(ctx context.Context) {
	select {
	case <-h.ready:
	case <-ctx.Done():
		return
	}
	h.mu.Lock()
	b := h.backend
	h.mu.Unlock()
	if b == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case call := <-h.calls:
			call(b)
		}
	}
}

func (h *host) register() error {
	handlers := map[string]any{
		"fido_submit": func(text string) {
			defer h.recover("fido_submit")
			h.withBackend("submit", func(b Backend) { b.Submit(text) })
		},
		"fido_cancel": func() {
			defer h.recover("fido_cancel")
			// Here, in order with fido_answer: the questions end as
			// cancelled before the pickers' closing answers arrive.
			h.prompts.cancelAll()
			h.withBackend("cancel", func(b Backend) { b.Cancel() })
		},
		"fido_plan": func(arg string) {
			defer h.recover("fido_plan")
			switch strings.TrimSpace(arg) {
			case "hide": // window state only: the plan itself is untouched
				h.ui.planClosed()
			case "toggle":
				h.ui.togglePlan()
			default:
				h.withBackend("plan", func(b Backend) { b.Plan(arg) })
			}
		},
		"fido_plan_hidden": func() {
			defer h.recover("fido_plan_hidden")
			h.ui.planClosed()
		},
		// fido_models lists the model ids of the session's cached model list.
		"fido_models": func() ([]string, error) {
			defer h.recover("fido_models")
			h.mu.Lock()
			b := h.backend
			h.mu.Unlock()
			out := []string{}
			if l, ok := b.(interface{ SlashModels() []string }); ok {
				out = append(out, l.SlashModels()...)
			}
			return out, nil
		},
		"fido_permissions": func(lines []string) {
			defer h.recover("fido_permissions")
			h.withBackend("permissions", func(b Backend) {
				if ps, ok := b.(PermissionsSaver); ok {
					ps.SavePermissions(lines)
				}
			})
		},
		"fido_review": func(req reviewRequest) {
			defer h.recover("fido_review")
			h.withBackend("review", func(b Backend) { b.Review(req.agent()) })
		},
		// fido_waiting: a question waits while the user writes; the
		// transcript says what waits and how to answer it.
		"fido_waiting": func(msg string) {
			defer h.recover("fido_waiting")
			h.ui.Notice(msg)
		},
		"fido_answer": func(id int, v any) {
			defer h.recover("fido_answer")
			h.prompts.answer(id, v)
		},
		"fido_resize": func(d EditorDims) {
			defer h.recover("fido_resize")
			h.ui.resized(d)
		},
		"fido_lsp": func(id int, result any) {
			defer h.recover("fido_lsp")
			h.lsp.deliver(id, result)
		},
		"fido_ping": func() (string, error) {
			return "pong", nil
		},
		// fido_commands lists the slash commands for completion, the
		// Markdown-defined ones found afresh on every call.
		"fido_commands": func() ([]SlashCommand, error) {
			defer h.recover("fido_commands")
			h.mu.Lock()
			b := h.backend
			h.mu.Unlock()
			out := []SlashCommand{}
			if l, ok := b.(CommandLister); ok {
				for _, c := range l.SlashCommands() {
					out = append(out, SlashCommand{Name: c.Name, Args: c.Args, Help: c.Help})
				}
			}
			return out, nil
		},
	}
	for name, fn := range handlers {
		if err := h.v.RegisterHandler(name, fn); err != nil {
			return fmt.Errorf("register %s: %w", name, err)
		}
	}
	return nil
}
