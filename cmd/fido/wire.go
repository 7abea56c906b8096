package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/delegate"
	"github.com/fido-nvim/fido/nvim"
	"github.com/fido-nvim/fido/plan"
	"github.com/fido-nvim/fido/tools"
)

// serveRPC is the composition root: it serves Neovim on stdio and, once the
// connection is up, builds the workspace tools, the plan store, the delegate
// tool, the provider and the session.
func serveRPC(ctx context.Context, root string, getenv func(string) string) error {
	rpcOut := nvim.ProtectStdout()
	logger := log.New(os.Stderr, "fido: ", log.LstdFlags|log.Lmicroseconds)
	tools.SetPanicLog(os.Stderr)
	cfg := agent.ConfigFromEnv(getenv)
	return nvim.Run(ctx, nvim.RunConfig{
		In:   os.Stdin,
		Out:  rpcOut,
		Logf: logger.Printf,
		NewBackend: func(ui *nvim.UI, editor tools.Editor) (nvim.Backend, error) {
			return newBackend(cfg, root, getenv, ui, editor, logger)
		},
	})
}

func newBackend(cfg agent.Config, root string, getenv func(string) string, ui agent.UI, editor tools.Editor, logger *log.Logger) (nvim.Backend, error) {
	stateDir := cfg.WorkspaceStateDir(root)
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	undo, err := tools.OpenUndoLog(filepath.Join(stateDir, "undo.json"))
	if err != nil {
		if undo == nil {
			return nil, err
		}
		ui.Notify(err.Error(), agent.LevelWarn)
	}
	ws, err := tools.NewWorkspace(root, editor, undo)
	if err != nil {
		return nil, err
	}
	store, notice, err := plan.OpenStore(filepath.Join(stateDir, "plan.json"))
	if err != nil {
		return nil, err
	}
	if notice != "" {
		ui.Notify(notice, agent.LevelWarn)
	}
	provider := agent.NewOpenRouter(agent.OpenRouterConfig{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey})

	var registry *tools.Registry
	var session *agent.Session
	updatePlan := plan.NewUpdateTool(store, func(p plan.Plan) { ui.Plan(&p) })
	delegateTool := delegate.NewTool(delegate.Config{
		Provider:  provider,
		Registry:  func() *tools.Registry { return session.Registry() },
		Model:     cfg.Model,
		Reasoning: func() string { return session.Reasoning() },
		Status:    func(st *agent.SubagentStatus) { session.SubagentStatus(st) },
		Usage:     func(u agent.Usage) { session.AddSubagentUsage(u) },
	})
	all := append(tools.WorkspaceTools(ws), updatePlan, delegateTool, tools.NewAskExpertTool(ui))
	all = append(all, tools.NewWebTools(tools.WebConfig{BaseURL: cfg.TavilyURL, APIKey: cfg.TavilyKey})...)
	all = append(all, tools.NewBashTool(ws, ui), tools.NewAskUserTool(ui), tools.NewJSTool(ws, ui))
	registry, err = tools.NewRegistry(all...)
	if err != nil {
		return nil, err
	}
	servers := newMCP(ws.Root, stateDir, getenv, ui, logger)
	listing := tools.ListRoot(ws, 40)
	names := registry.Names()
	missing := ""
	if cfg.APIKey == "" {
		missing = agent.MissingKeyMessage
	}
	session, err = agent.NewSession(agent.SessionConfig{
		Provider:  provider,
		Registry:  registry,
		UI:        ui,
		Model:     cfg.Model,
		Reasoning: cfg.Reasoning,
		Root:      ws.Root,
		SystemPrompt: func() string {
			return agent.BuildSystemPrompt(agent.PromptInput{Root: ws.Root, Listing: listing, ToolNames: names})
		},
		Plans:         store,
		SuspendDir:    filepath.Join(stateDir, "suspends"),
		Undo:          func(n int) []string { return undoLines(undo, n) },
		UndoRevert:    ws.RevertLast,
		ContextBudget: cfg.ContextTokens,
		MissingKey:    missing,
		Catalog:       servers,
		Commands:      &mcpCommands{m: servers, ui: ui, session: func() *agent.Session { return session }},
	})
	if err != nil {
		servers.Close()
		return nil, err
	}
	if missing != "" {
		ui.Error(missing)
	} else if cfg.ContextTokens == 0 {
		// Size the context budget to the model's window when the endpoint says
		// it (3/4 of it: room for the answer and for the size estimate's error).
		go func() {
			n, err := provider.ContextLength(context.Background(), cfg.Model)
			if err != nil {
				logger.Printf("context budget stays at %d tokens: %v", agent.DefaultContextBudget, err)
				return
			}
			session.SetContextBudget(n * 3 / 4)
			logger.Printf("context budget: %d tokens (%s has %d)", n*3/4, cfg.Model, n)
		}()
	}
	logger.Printf("session ready: root=%s model=%s state=%s tools=%v", ws.Root, cfg.Model, stateDir, names)
	return &backend{Session: session, mcp: servers}, nil
}

// backend is the session plus what must end with it: the MCP servers.
type backend struct {
	*agent.Session
	mcp interface{ Close() }
}

// Close cancels the session and ends every MCP server's process group.
func (b *backend) Close() {
	b.Session.Close()
	b.mcp.Close()
}

// undoLines formats the newest n undo-log entries for /undo.
func undoLines(undo *tools.UndoLog, n int) []string {
	var out []string
	for i, e := range undo.Entries() {
		if i == n {
			break
		}
		line := fmt.Sprintf("%s  %s %s %s", e.Time.Local().Format("2006-01-02 15:04:05"), e.Tool, e.Op, e.Path)
		switch {
		case e.Prior != nil:
			line += fmt.Sprintf(" (prior content kept, %d bytes)", e.PriorSize)
		case e.PriorOmitted != "":
			line += " (prior content not kept: " + e.PriorOmitted + ")"
		}
		out = append(out, line)
	}
	return out
}
