package nvim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/fido-nvim/fido/tools"
)

// lspSlack is how much longer than Lua's own timeout the host waits for an
// answer before it gives up (Neovim may be busy, e.g. in a prompt).
const lspSlack = 3 * time.Second

// lspCalls routes fido_lsp notifications (id, result) to the calls waiting
// for them. Lua sends every LSP request with a callback and notifies the
// host; nothing waits inside an RPC call.
type lspCalls struct {
	mu   sync.Mutex
	next int
	wait map[int]chan any
}

func (c *lspCalls) add() (int, chan any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wait == nil {
		c.wait = map[int]chan any{}
	}
	c.next++
	ch := make(chan any, 1)
	c.wait[c.next] = ch
	return c.next, ch
}

func (c *lspCalls) drop(id int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.wait, id)
}

// deliver hands a result to its waiter; a late or unknown one is dropped.
func (c *lspCalls) deliver(id int, result any) {
	c.mu.Lock()
	ch := c.wait[id]
	delete(c.wait, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- result
	}
}

// lspStarted is what the Lua entry points return at once.
type lspStarted struct {
	Error     string `msgpack:"error"`
	Disabled  bool   `msgpack:"disabled"`
	TimeoutMS int    `msgpack:"timeout_ms"`
}

// errLSPDisabled: post-edit diagnostics are off (or unsupported).
var errLSPDisabled = errors.New("LSP diagnostics are disabled")

// lspCall runs require("fido.lsp")[fn](chan, id, arg) and waits for the
// notification with the answer, decoded into out; it returns the call's id.
// A Lua-side refusal comes back as a *lspRefusal.
func (e *Editor) lspCall(ctx context.Context, fn string, arg any, out any) (int, error) {
	if e.lsp == nil {
		return 0, errors.New("the editor has no LSP channel")
	}
	id, ch := e.lsp.add()
	return id, e.lspWait(ctx, id, ch, fn, arg, out)
}

func (e *Editor) lspWait(ctx context.Context, id int, ch chan any, fn string, arg any, out any) error {
	defer e.lsp.drop(id)
	var st lspStarted
	err := e.call(ctx, func() error {
		return e.v.ExecLua(`local fn, chan, id, arg = ...
return require("fido.lsp")[fn](chan, id, arg)`, &st, fn, e.chanID, id, arg)
	})
	if err != nil {
		return err
	}
	switch {
	case st.Error != "":
		return &lspRefusal{msg: st.Error}
	case st.Disabled:
		return errLSPDisabled
	}
	timer := time.NewTimer(time.Duration(st.TimeoutMS)*time.Millisecond + lspSlack)
	defer timer.Stop()
	select {
	case res := <-ch:
		return decodeLSP(res, out)
	case <-ctx.Done():
		e.lspCancel(id)
		return ctx.Err()
	case <-timer.C:
		e.lspCancel(id)
		return fmt.Errorf("no answer from Neovim to the LSP call within %d ms", st.TimeoutMS+int(lspSlack/time.Millisecond))
	}
}

// lspCancel tells Lua to drop id (and cancel its requests), without waiting.
func (e *Editor) lspCancel(id int) {
	go func() {
		_ = e.v.ExecLua(`require("fido.lsp").cancel(...)`, nil, id)
	}()
}

// lspRefusal is a model-facing refusal from Lua (Neovim too old, …).
type lspRefusal struct{ msg string }

func (r *lspRefusal) Error() string { return r.msg }

// decodeLSP converts a msgpack-decoded Lua table into out via JSON.
func decodeLSP(v any, out any) error {
	v = plainJSON(v)
	if a, ok := v.([]any); ok && len(a) == 0 {
		v = map[string]any{} // Lua's {} arrives as an empty array
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("LSP answer: %w", err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("LSP answer: %w", err)
	}
	return nil
}

// plainJSON makes msgpack values JSON-friendly ([]byte → string; an empty
// Lua table inside a list stays an empty list).
func plainJSON(v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case []any:
		for i := range x {
			x[i] = plainJSON(x[i])
		}
		return x
	case map[string]any:
		for k, e := range x {
			if a, ok := e.([]any); ok && len(a) == 0 {
				delete(x, k) // {} for a missing list or object: leave it out
				continue
			}
			x[k] = plainJSON(e)
		}
		return x
	}
	return v
}

// LSPQuery asks the language servers attached in Neovim (vim.lsp). Lua
// sends the request and passes the servers' answers up as they came; the
// tools read them (tools/lsp).
func (e *Editor) LSPQuery(ctx context.Context, q tools.LSPQuery) (tools.LSPReply, error) {
	if q.Path != "" {
		abs, err := filepath.Abs(q.Path)
		if err != nil {
			return tools.LSPReply{}, err
		}
		q.Path = abs
	}
	arg := map[string]any{"method": q.Method, "path": q.Path, "query": q.Query}
	if p := q.Position; p != nil {
		arg["position"] = map[string]any{"line": p.Line, "utf-8": p.UTF8, "utf-16": p.UTF16, "utf-32": p.UTF32}
	}
	var rep tools.LSPReply
	_, err := e.lspCall(ctx, "query", arg, &rep)
	var refusal *lspRefusal
	if errors.As(err, &refusal) {
		return tools.LSPReply{Error: refusal.msg}, nil
	}
	return rep, err
}

// WatchDiagnostics records the LSP diagnostics of paths before a change.
func (e *Editor) WatchDiagnostics(ctx context.Context, paths []string) (tools.DiagnosticsWatch, error) {
	var arg any // nil: every loaded buffer
	if paths != nil {
		abs := make([]string, 0, len(paths))
		for _, p := range paths {
			if a, err := filepath.Abs(p); err == nil {
				abs = append(abs, a)
			}
		}
		arg = abs
	}
	var w tools.DiagnosticsWatch
	id, err := e.lspCall(ctx, "watch", arg, &w)
	var refusal *lspRefusal
	if errors.Is(err, errLSPDisabled) || errors.As(err, &refusal) {
		return tools.DiagnosticsWatch{Disabled: true}, nil
	}
	w.ID = id
	return w, err
}

// SettleDiagnostics waits for the diagnostics after a change (see tools.LanguageServers).
func (e *Editor) SettleDiagnostics(ctx context.Context, w tools.DiagnosticsWatch, changed []string) ([]tools.FileDiagnostics, error) {
	if w.Disabled {
		return nil, nil
	}
	var arg any
	if changed != nil {
		abs := make([]string, 0, len(changed))
		for _, p := range changed {
			if a, err := filepath.Abs(p); err == nil {
				abs = append(abs, a)
			}
		}
		arg = abs
	}
	var res struct {
		Files []tools.FileDiagnostics `json:"files"`
	}
	_, err := e.lspCall(ctx, "settle", map[string]any{"watch": w.ID, "changed": arg}, &res)
	if errors.Is(err, errLSPDisabled) {
		return nil, nil
	}
	return res.Files, err
}

var _ tools.LanguageServers = (*Editor)(nil)
