package nvim

import (
	"context"
	"fmt"
	"sync"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools"
)

// prompts runs vim.ui.select / vim.ui.input from a scheduled Lua callback and
// waits for the fido_answer notification carrying the same id. Only the
// calling goroutine waits; the RPC loop never does (NVIM.md pitfall 11).
type prompts struct {
	exec func(code string, args ...any) error
	// sync sends the UI's pending changes before a question goes out, so
	// Lua shows the state the question belongs to (nil: nothing to send).
	sync func(context.Context) error

	mu      sync.Mutex
	next    int
	waiting map[int]chan any
}

func newPrompts(exec func(code string, args ...any) error) *prompts {
	return &prompts{exec: exec, waiting: map[int]chan any{}}
}

func (p *prompts) ask(ctx context.Context, code string, args ...any) (any, error) {
	p.mu.Lock()
	p.next++
	id := p.next
	ch := make(chan any, 1)
	p.waiting[id] = ch
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.waiting, id)
		p.mu.Unlock()
	}()
	// The call only schedules the picker, but Neovim may be busy in another
	// blocking prompt: wait for it in a goroutine so ctx still cancels.
	sent := make(chan error, 1)
	go func() {
		if p.sync != nil {
			if err := p.sync(ctx); err != nil {
				sent <- err
				return
			}
		}
		sent <- p.exec(code, append([]any{id}, args...)...)
	}()
	for {
		select {
		case err := <-sent:
			if err != nil {
				return nil, err
			}
			sent = nil
		case v := <-ch:
			if _, ok := v.(cancelledAnswer); ok {
				return nil, errQuestionCancelled
			}
			return v, nil
		case <-ctx.Done():
			// Close the picker if it is still open: its answer would find no waiter.
			go func() { _ = p.exec(`require("fido.bridge").dismiss(...)`, id) }()
			return nil, ctx.Err()
		}
	}
}

// cancelledAnswer is what cancelAll delivers in place of an answer.
type cancelledAnswer struct{}

// errQuestionCancelled is ask's error for a question the user cancelled
// (:FidoCancel, <C-c>); tools.Cancelled recognizes it.
var errQuestionCancelled = fmt.Errorf("the question was cancelled: %w", context.Canceled)

// cancelAll ends every waiting question as cancelled. The fido_cancel
// handler calls it in the RPC loop, before the picker's own "dismissed"
// answer (sent right after by Lua) can arrive and before the turn's context
// is cancelled on the work goroutine: so a cancelled approval is reported as
// cancelled, never as dismissed.
func (p *prompts) cancelAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ch := range p.waiting {
		select {
		case ch <- cancelledAnswer{}:
		default:
		}
	}
}

// answer delivers a fido_answer notification.
func (p *prompts) answer(id int, v any) {
	p.mu.Lock()
	ch := p.waiting[id]
	p.mu.Unlock()
	if ch != nil {
		select {
		case ch <- v:
		default:
		}
	}
}

func (p *prompts) sel(ctx context.Context, prompt string, items []string) (int, error) {
	if items == nil {
		items = []string{}
	}
	v, err := p.ask(ctx, `require("fido.bridge").select(...)`, prompt, items)
	if err != nil {
		return -1, err
	}
	idx, ok := toInt(v)
	if !ok || idx < 1 || idx > len(items) {
		return -1, nil
	}
	return idx - 1, nil
}

// questionView is a tools.Question as Lua's fido.questions receives it
// (safe is 1-based there, like Lua's indexes).
type questionView struct {
	Prompt   string   `msgpack:"prompt"`
	Items    []string `msgpack:"items"`
	Safe     int      `msgpack:"safe"`
	Approval bool     `msgpack:"approval"`
	Detail   string   `msgpack:"detail"`
	Filetype string   `msgpack:"filetype"`
	Info     []string `msgpack:"info"`
	Sandbox  string   `msgpack:"sandbox"`
	Call     string   `msgpack:"call"`
}

// question asks q with its detail shown beside the picker; the answer is an
// index into q.Items, -1 when dismissed.
func (p *prompts) question(ctx context.Context, q tools.Question) (int, error) {
	items := q.Items
	if items == nil {
		items = []string{}
	}
	info := q.DetailInfo
	if info == nil {
		info = []string{}
	}
	safe := 0
	if q.Safe >= 0 && q.Safe < len(items) {
		safe = q.Safe + 1
	}
	v, err := p.ask(ctx, `require("fido.bridge").question(...)`, questionView{
		Prompt: q.Prompt, Items: items, Safe: safe, Approval: q.Approval,
		Detail: q.Detail, Filetype: q.DetailFiletype, Info: info, Sandbox: q.Sandbox, Call: q.CallID,
	})
	if err != nil {
		return -1, err
	}
	idx, ok := toInt(v)
	if !ok || idx < 1 || idx > len(items) {
		return -1, nil
	}
	return idx - 1, nil
}

func (p *prompts) input(ctx context.Context, prompt, def string) (string, bool, error) {
	v, err := p.ask(ctx, `require("fido.bridge").input(...)`, prompt, def)
	if err != nil {
		return "", false, err
	}
	s, ok := v.(string)
	return s, ok, nil
}

func (p *prompts) expert(ctx context.Context, question string) (string, bool, error) {
	v, err := p.ask(ctx, `require("fido.bridge").expert(...)`, question)
	if err != nil {
		return "", false, err
	}
	s, ok := v.(string)
	return s, ok, nil
}

func (p *prompts) notify(msg string, level agent.Level) {
	go func() { _ = p.exec(`require("fido.bridge").notify(...)`, msg, int(level)) }()
}

// toInt converts a msgpack-decoded number.
func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case int64:
		return int(n), true
	case uint64:
		return int(n), true
	case int:
		return n, true
	case float64:
		return int(n), true
	}
	return 0, false
}
