package mcp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fido-nvim/fido/tools/text"
)

// PromptCommandPrefix starts the slash command of a server prompt:
// /mcp:<server>:<prompt> args.
const PromptCommandPrefix = "/mcp:"

// PromptInfo is one server prompt offered as a slash command.
type PromptInfo struct {
	Server      string
	Name        string
	Description string
	Args        []string // argument names in order; required ones first as the server lists them
}

// Command is the slash command that runs the prompt.
func (p PromptInfo) Command() string { return PromptCommandPrefix + p.Server + ":" + p.Name }

// Prompts lists the prompts of every ready server, by server then name.
func (m *Manager) Prompts() []PromptInfo {
	var out []PromptInfo
	for _, s := range m.list() {
		s.mu.Lock()
		if s.state == StateReady {
			for _, p := range s.prompts {
				info := PromptInfo{Server: s.cfg.Name, Name: p.Name, Description: p.Description}
				for _, a := range p.Arguments {
					info.Args = append(info.Args, a.Name)
				}
				out = append(out, info)
			}
		}
		s.mu.Unlock()
	}
	return out
}

// GetPrompt fetches a prompt with positional arguments and returns its
// messages as text to send as the user's message.
func (m *Manager) GetPrompt(ctx context.Context, command string, args []string) (string, error) {
	rest := strings.TrimPrefix(command, PromptCommandPrefix)
	srvName, name, ok := strings.Cut(rest, ":")
	if !ok || srvName == "" || name == "" {
		return "", fmt.Errorf("%s: use /mcp:<server>:<prompt> args", command)
	}
	s := m.server(srvName)
	if s == nil {
		return "", fmt.Errorf("%s: no MCP server %q", command, srvName)
	}
	s.mu.Lock()
	var prompt *sdk.Prompt
	for _, p := range s.prompts {
		if p.Name == name {
			prompt = p
		}
	}
	s.mu.Unlock()
	if prompt == nil {
		return "", fmt.Errorf("%s: server %s has no prompt %q", command, srvName, name)
	}
	params := &sdk.GetPromptParams{Name: name, Arguments: map[string]string{}}
	for i, a := range prompt.Arguments {
		switch {
		case i < len(args):
			v := args[i]
			if i == len(prompt.Arguments)-1 && len(args) > len(prompt.Arguments) {
				v = strings.Join(args[i:], " ") // the last argument takes the rest
			}
			params.Arguments[a.Name] = v
		case a.Required:
			var names []string
			for _, pa := range prompt.Arguments {
				names = append(names, "<"+pa.Name+">")
			}
			return "", fmt.Errorf("%s needs %s: %s %s", command, a.Name, command, strings.Join(names, " "))
		}
	}
	sess, err := s.live(ctx)
	if err != nil {
		return "", err
	}
	res, err := sess.GetPrompt(ctx, params)
	if err != nil {
		return "", fmt.Errorf("%s: %s", command, text.Collapse(err.Error()))
	}
	var parts []string
	for _, msg := range res.Messages {
		switch c := msg.Content.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.EmbeddedResource:
			if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s]\n%s", c.Resource.URI, c.Resource.Text))
			}
		default:
			parts = append(parts, fmt.Sprintf("[%T content not shown]", c))
		}
	}
	text := strings.TrimSpace(strings.Join(parts, "\n\n"))
	if text == "" {
		return "", fmt.Errorf("%s: the prompt is empty", command)
	}
	return bound(text), nil
}

// StatusLines describes every server for /mcp and :checkhealth.
func (m *Manager) StatusLines() []string {
	if m.Empty() {
		return []string{"no MCP servers configured (setup({ mcp = { servers = … } }), $XDG_CONFIG_HOME/fido/mcp.json or .mcp.json)"}
	}
	var out []string
	for _, st := range m.Status() {
		line := fmt.Sprintf("%s (%s): %s", st.Name, st.Source, st.State)
		switch st.State {
		case StateReady:
			line += fmt.Sprintf(" with %d tools", st.Tools)
			if st.Prompts > 0 {
				line += fmt.Sprintf(", %d prompts", st.Prompts)
			}
		case StateFailed, StateCrashed, StateUntrusted, StateNeverTrust:
			if st.Reason != "" {
				line += ": " + st.Reason
			}
		}
		if st.Restarts > 0 {
			line += fmt.Sprintf(" (restarted %d×)", st.Restarts)
		}
		out = append(out, line)
	}
	return out
}

// Pending reports whether tools came up or changed after the last catalog.
func (m *Manager) Pending() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pendingNew
}
