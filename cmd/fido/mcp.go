package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/adrg/xdg"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools/confined"
	"github.com/fido-nvim/fido/tools/mcp"
	"github.com/fido-nvim/fido/tools/permission"
	"github.com/fido-nvim/fido/tools/sandbox"
	"github.com/fido-nvim/fido/tools/shell"
	"github.com/fido-nvim/fido/tools/text"
)

// MCPConfigEnv carries setup({ mcp = … }) from Lua as JSON.
const MCPConfigEnv = "FIDO_MCP_CONFIG"

// mcpOptions reads the MCP configuration: setup() first, then the user's
// $XDG_CONFIG_HOME/fido/mcp.json, then the project's .mcp.json (read with
// readProject: a regular file inside the workspace only). Every broken
// source is one line in problems; the others still count.
func mcpOptions(root string, readProject mcp.Reader, getenv func(string) string) (mcp.Options, []string) {
	var problems []string
	opts, err := mcp.ParseSetup(getenv(MCPConfigEnv), getenv)
	if err != nil {
		problems = append(problems, err.Error())
	}
	configHome := getenv("XDG_CONFIG_HOME")
	if configHome == "" {
		configHome = xdg.ConfigHome
	}
	userFile := filepath.Join(configHome, "fido", "mcp.json")
	projectFile := filepath.Join(root, ".mcp.json")
	user, err := mcp.LoadFile(confined.ReadPath, userFile, userFile, mcp.SourceUser, getenv)
	if err != nil {
		problems = append(problems, err.Error())
	}
	project, err := mcp.LoadFile(readProject, ".mcp.json", projectFile, mcp.SourceProject, getenv)
	if err != nil {
		problems = append(problems, err.Error())
	}
	servers, shadowed := mcp.Merge(opts.Servers, user, project)
	opts.Servers = servers
	opts.Files = []string{userFile, projectFile}
	return opts, append(problems, shadowed...)
}

// newMCP builds the MCP manager and starts its servers (in the background).
// load reads the servers' configuration again (for /mcp reload), reporting
// its problems as at start.
func newMCP(root string, readProject mcp.Reader, stateDir string, getenv func(string) string, ui frontEnd, logger *log.Logger, rules *permission.Store, bash *shell.BashTool) (m *mcp.Manager, load func() []mcp.ServerConfig) {
	read := func() mcp.Options {
		opts, problems := mcpOptions(root, readProject, getenv)
		for _, p := range problems {
			ui.Error("MCP configuration: " + p)
			logger.Printf("mcp config: %s", p)
		}
		return opts
	}
	opts := read()
	// Each stdio server runs under this executable's guard (fido mcp-guard).
	guard, err := os.Executable()
	if err != nil {
		logger.Printf("mcp: servers run without their guard: %v", err)
	}
	m = mcp.New(mcp.Config{
		Guard: guard,
		// Servers whose entry (or new trust) asks for it run in the same
		// OS sandbox as commands, under their guard.
		Sandbox: func(c mcp.ServerConfig, network bool) (sandbox.Policy, func([]string) []string, error) {
			return bash.ServerPolicy(c.Name, network)
		},
		Options:  opts,
		Root:     root,
		StateDir: stateDir,
		Rules:    rules,
		Logf:     logger.Printf,
		Version:  versionString(),
		Notify: func(msg string, warn bool) {
			if warn {
				ui.Notify(msg, agent.LevelWarn)
				return
			}
			ui.Notice(msg)
		},
		OnState: func() {
			// Prompt commands reach completion through fido_commands.
			if st, ok := ui.(interface{ MCPState(lines, failed []string) }); ok && m != nil {
				st.MCPState(m.StatusLines(), m.Failed())
			}
		},
	})
	m.Start(ui)
	return m, func() []mcp.ServerConfig { return read().Servers }
}

// mcpCommands are /mcp, /mcp reload, /mcp trust reset and the servers'
// prompts as /mcp:<server>:<prompt> args: rows of the session's command
// table, all run on their own goroutine.
type mcpCommands struct {
	m      *mcp.Manager
	screen agent.Screen
	// session is what the commands act on, set once it exists.
	session mcpSession
	// load reads the configuration again (/mcp reload).
	load func() []mcp.ServerConfig
}

// mcpSession is what the MCP commands need of the session.
type mcpSession interface {
	Submit(text string)
	Busy() bool
	ResetTools()
}

// Commands implements agent.CommandSet: /mcp, every prompt a server
// offers now, and a prefix row for a prompt not listed yet.
func (c *mcpCommands) Commands() []agent.SlashCommand {
	out := []agent.SlashCommand{
		{Command: agent.Command{Name: "/mcp", Args: "[reload|trust reset]", Help: "MCP servers and their state; reload restarts them from the configuration as it is now and takes their tools into this conversation; trust reset forgets the .mcp.json trust answers"},
			Async: true, Run: c.Run},
	}
	for _, p := range c.m.Prompts() {
		args := ""
		for _, a := range p.Args {
			args += " <" + a + ">"
		}
		out = append(out, agent.SlashCommand{Command: agent.Command{Name: p.Command(), Args: strings.TrimSpace(args), Help: oneLineHelp(p.Description)},
			Async: true, Run: c.Run})
	}
	// A prompt not listed (yet) is still the servers' to answer.
	return append(out, agent.SlashCommand{Command: agent.Command{Name: mcp.PromptCommandPrefix}, Prefix: true, Async: true, Run: c.Run})
}

func oneLineHelp(s string) string {
	if s = text.ShortenTo(text.Collapse(s), 80); s == "" {
		return "MCP prompt"
	}
	return s
}

// Run runs /mcp [arg] and the prompt commands.
func (c *mcpCommands) Run(name, arg string) {
	if strings.HasPrefix(name, mcp.PromptCommandPrefix) {
		text, err := c.m.GetPrompt(context.Background(), name, strings.Fields(arg))
		if err != nil {
			c.screen.Error(err.Error())
			return
		}
		c.session.Submit(text)
		return
	}
	switch arg {
	case "":
		c.screen.Notice("MCP servers:\n  " + strings.Join(c.m.StatusLines(), "\n  "))
	case "reload":
		s := c.session
		if s.Busy() {
			c.screen.Error("/mcp reload: a turn is running; cancel it first")
			return
		}
		if c.load != nil {
			// Every server's whole process tree ends; the configuration is
			// read again and a changed .mcp.json entry asks trust again.
			c.m.Reload(c.load())
		}
		s.ResetTools()
		c.screen.Notice("MCP servers restarted from the configuration as it is now; their tools are taken again at the next request (the tool list changes, so the cached prompt prefix starts over)")
	case "trust reset":
		if err := c.m.ResetTrust(); err != nil {
			c.screen.Error("/mcp trust reset: " + err.Error())
			return
		}
		c.screen.Notice("the trust answer for this workspace's .mcp.json is forgotten; Fido asks again at its next start")
	default:
		c.screen.Error(fmt.Sprintf("/mcp: unknown argument %q (use /mcp, /mcp reload or /mcp trust reset)", arg))
	}
}
