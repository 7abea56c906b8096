package agent

import (
	"context"
	"sync"

	"github.com/fido-nvim/fido/tools"
)

// ToolCatalog supplies tools that are fixed per conversation (the tools of
// MCP servers): taken once at a conversation's first request and advertised
// after the built-in tools, so the request prefix stays byte-identical for
// the whole conversation.
type ToolCatalog interface {
	// Catalog returns the extra tools and lines to show in the transcript
	// (tools left out and why). It may wait, bounded, for servers starting.
	Catalog(ctx context.Context) (extra []tools.Tool, notes []string)
}

// convTools are the tools of the current conversation: the built-in
// registry plus, once the conversation's first request fixed it, the
// catalog's tools; and the tracker of the subdirectories' AGENTS.md it
// attached. Subagents advertise and call the same registry.
type convTools struct {
	mu      sync.Mutex
	reg     *tools.Registry // nil until the conversation's first request
	nested  *NestedInstructions
	base    *tools.Registry
	catalog ToolCatalog // nil: no extra tools
	read    FileReader  // nil: no nested instructions
	screen  interface { // hears of tools left out
		Notice(msg string)
		Error(msg string)
	}
}

// registry is the conversation's registry: the fixed one, else the built-in.
func (c *convTools) registry() *tools.Registry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reg != nil {
		return c.reg
	}
	return c.base
}

// reset drops the fixed catalog: the next request takes a new one (its
// tool list, and so the cached prompt prefix, may change).
func (c *convTools) reset() {
	c.mu.Lock()
	c.reg = nil
	c.mu.Unlock()
}

// forgetNested starts the AGENTS.md tracker over (another conversation).
func (c *convTools) forgetNested() {
	c.mu.Lock()
	c.nested = nil
	c.mu.Unlock()
}

// fix returns the registry of this conversation, taking the catalog at
// its first request.
func (c *convTools) fix(ctx context.Context) *tools.Registry {
	c.mu.Lock()
	reg, catalog := c.reg, c.catalog
	c.mu.Unlock()
	if reg != nil || catalog == nil {
		if reg == nil {
			reg = c.base
		}
		return reg
	}
	extra, notes := catalog.Catalog(ctx)
	for _, n := range notes {
		c.screen.Notice(n)
	}
	reg = c.base
	if len(extra) > 0 {
		if reg == nil {
			var err error
			if reg, err = tools.NewRegistry(); err != nil {
				return nil
			}
		}
		with, err := reg.With(extra...)
		if err != nil {
			c.screen.Error("extra tools left out: " + err.Error())
		} else {
			reg = with
		}
	}
	c.mu.Lock()
	c.reg = reg
	c.mu.Unlock()
	return reg
}

// tokens estimates the tool catalog's share of every request: the
// conversation's catalog once its first request fixed it (MCP tools
// included), the built-in tools before.
func (c *convTools) tokens() int {
	reg := c.registry()
	if reg == nil {
		return 0
	}
	n := 0
	for _, sp := range reg.Specs() {
		n += len(sp.Name) + len(sp.Description) + len(sp.Parameters) + 32
	}
	return n / 4
}

// access is what the tool called name may do (tools.ReadOnly when unknown).
func (c *convTools) access(name string) tools.Access {
	if reg := c.registry(); reg != nil {
		if t, ok := reg.Lookup(name); ok {
			return t.Access()
		}
	}
	return tools.ReadOnly
}

// summarize is the transcript line of a call.
func (c *convTools) summarize(call ToolCall) string {
	if reg := c.registry(); reg != nil {
		return reg.SummarizeCall(call.Name, []byte(call.Arguments))
	}
	return call.Name
}

// nestedFor is the conversation's AGENTS.md tracker, made on first use
// (nil without nested instructions); msgs are the conversation, which
// already carries what it attached.
func (c *convTools) nestedFor(msgs func() []Message) *NestedInstructions {
	if c.read == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nested == nil {
		c.nested = NewNestedInstructions(c.read)
		m := msgs()
		c.nested.MarkSeen(attachedDirs(m))
		c.nested.carry(attachedBytes(m))
	}
	return c.nested
}
