package agent

import (
	"context"

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

// CommandSet is a group of slash commands a feature outside the core adds
// (/mcp …). They are listed in /help and run on their own goroutine.
type CommandSet interface {
	// Commands lists the commands for /help (it may change over time).
	Commands() []Command
	// Handles reports whether name (e.g. "/mcp" or "/mcp:srv:prompt") is one of them.
	Handles(name string) bool
	// Run runs the command with its argument text.
	Run(name, arg string)
}

// Registry is the tool registry of the current conversation: the built-in
// tools plus, once the conversation's first request fixed them, the
// catalog's. Subagents advertise and call the same.
func (s *Session) Registry() *tools.Registry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reg != nil {
		return s.reg
	}
	return s.cfg.Registry
}

// ResetTools drops the conversation's fixed catalog: the next request takes
// a new one (its tool list, and so the cached prompt prefix, may change).
func (s *Session) ResetTools() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reg = nil
}

// conversationTools returns the registry of this conversation, taking the
// catalog at its first request.
func (s *Session) conversationTools(ctx context.Context) *tools.Registry {
	s.mu.Lock()
	reg, catalog := s.reg, s.cfg.Catalog
	s.mu.Unlock()
	if reg != nil || catalog == nil {
		if reg == nil {
			reg = s.cfg.Registry
		}
		return reg
	}
	extra, notes := catalog.Catalog(ctx)
	for _, n := range notes {
		s.ui.Notice(n)
	}
	reg = s.cfg.Registry
	if len(extra) > 0 {
		if reg == nil {
			var err error
			if reg, err = tools.NewRegistry(); err != nil {
				return nil
			}
		}
		with, err := reg.With(extra...)
		if err != nil {
			s.ui.Error("extra tools left out: " + err.Error())
		} else {
			reg = with
		}
	}
	s.mu.Lock()
	s.reg = reg
	s.mu.Unlock()
	return reg
}
