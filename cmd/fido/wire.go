package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/agent/openrouter"
	"github.com/fido-nvim/fido/delegate"
	"github.com/fido-nvim/fido/nvim"
	"github.com/fido-nvim/fido/plan"
	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/ask"
	"github.com/fido-nvim/fido/tools/confined"
	"github.com/fido-nvim/fido/tools/files"
	"github.com/fido-nvim/fido/tools/js"
	"github.com/fido-nvim/fido/tools/lsp"
	"github.com/fido-nvim/fido/tools/permission"
	"github.com/fido-nvim/fido/tools/secret"
	"github.com/fido-nvim/fido/tools/shell"
	"github.com/fido-nvim/fido/tools/web"
	"github.com/fido-nvim/fido/tools/workspace"
)

// serveRPC is the composition root: it serves Neovim on stdio and, once the
// connection is up, builds the workspace tools, the plan store, the delegate
// tool, the provider and the session.
func serveRPC(ctx context.Context, root string, getenv func(string) string) error {
	rpcOut := nvim.ProtectStdout()
	// The log and panic stacks go to stderr (fido.log), keys redacted.
	stderr := secret.RedactWriter(os.Stderr)
	logger := log.New(stderr, "fido: ", log.LstdFlags|log.Lmicroseconds)
	tools.SetPanicLog(stderr)
	// Every tool result loses Fido's keys before the model or the transcript sees it.
	tools.SetRedactor(secret.Redact)
	harden(logger.Printf)
	cfg := agent.ConfigFromEnv(getenv)
	keyProblems := resolveKeys(ctx, &cfg, getenv)
	cleanup := &exitCleanup{logf: logger.Printf}
	cleanup.watch(ctx)
	defer cleanup.run()
	return nvim.Run(ctx, nvim.RunConfig{
		In:   cleanup.reader(nvim.RPCStdin()),
		Out:  rpcOut,
		Logf: logger.Printf,
		NewBackend: func(ui *nvim.UI, editor tools.Editor) (nvim.Backend, error) {
			b, err := newBackend(cfg, root, getenv, ui, editor, logger)
			for _, p := range keyProblems {
				ui.Error(p)
			}
			return b, err
		},
	})
}

func newBackend(cfg agent.Config, root string, getenv func(string) string, ui agent.UI, editor tools.Editor, logger *log.Logger) (nvim.Backend, error) {
	stateDir := cfg.WorkspaceStateDir(root)
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	undo, err := workspace.OpenUndoLog(filepath.Join(stateDir, "undo.json"))
	if err != nil {
		if undo == nil {
			return nil, err
		}
		ui.Notify(err.Error(), agent.LevelWarn)
	}
	ws, err := workspace.New(root, editor, undo)
	if err != nil {
		return nil, err
	}
	// A skipped ignore file changes what the model sees (its ignored files
	// show up), so the user hears of it once, besides the log.
	ws.Sandbox.Logf = func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		logger.Print(msg)
		ui.Notify("Fido "+msg+"; Fido reads only regular files inside the workspace", agent.LevelWarn)
	}
	store, notice, err := plan.OpenStore(filepath.Join(stateDir, "plan.json"))
	if err != nil {
		return nil, err
	}
	if notice != "" {
		ui.Notify(notice, agent.LevelWarn)
	}
	for _, w := range cfg.Warnings {
		ui.Notify("Fido: "+w, agent.LevelWarn)
	}
	// A slow stream is read once per flush of the screen, not once per piece.
	provider := openrouter.New(openrouter.Config{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, IdleTimeout: cfg.IdleTimeout,
		ReadPace: nvim.FlushInterval})

	var registry *tools.Registry
	var session *agent.Session
	updatePlan := plan.NewUpdateTool(store, func(p plan.Plan) { ui.Plan(&p) })
	delegateTool := delegate.NewTool(delegate.Config{
		Provider: provider,
		Registry: func() *tools.Registry { return session.Registry() },
		Model:    cfg.Model,
		// The parent's model after /model; nested AGENTS.md as the parent gets them.
		CurrentModel: func() string { return session.Model() },
		AfterTool: func(fork []agent.Message) func(agent.ToolCall, tools.Result) tools.Result {
			return agent.NestedHook(ws.Sandbox.ReadOwnFile, fork)
		},
		Reasoning: func() string { return session.Reasoning() },
		Status:    func(st *agent.SubagentStatus) { session.SubagentStatus(st) },
		Usage:     func(u agent.Usage) { session.AddSubagentUsage(u) },
	})
	all := append(files.Tools(ws), updatePlan, delegateTool, ask.NewAskExpertTool(ui))
	all = append(all, web.Tools(web.Config{BaseURL: cfg.TavilyURL, APIKey: cfg.TavilyKey})...)
	jsTool := js.NewJSTool(ws, ui)
	jsTool.Prewarm() // its worker process starts now, not during the first call
	perms, notice := permission.OpenStore(filepath.Join(stateDir, "permissions.json"), cfg.Permissions)
	if notice != "" {
		ui.Notify("Fido: "+notice, agent.LevelWarn)
	}
	// One rule set decides commands, JS network access and MCP tools.
	jsTool.WithPermissions(perms)
	all = append(all, shell.NewBashTool(ws, ui).WithPermissions(perms), ask.NewAskUserTool(ui), jsTool)
	all = append(all, lsp.Tools(ws)...)
	registry, err = tools.NewRegistry(all...)
	if err != nil {
		return nil, err
	}
	// Edits report the LSP diagnostics they introduced (Neovim's vim.lsp).
	if err := registry.Intercept("patch", lsp.PatchDiagnostics(ws)); err != nil {
		return nil, err
	}
	if err := registry.Intercept("bash_exec", lsp.BashDiagnostics(ws)); err != nil {
		return nil, err
	}
	// .mcp.json is read as Fido reads its own files: a regular file inside
	// the workspace, never a FIFO or a device, at most mcp.MaxConfigFile.
	readProject := func(name string, limit int64) ([]byte, error) { return confined.ReadFile(ws.Sandbox.FS(), name, limit) }
	servers, loadMCP := newMCP(ws.Root, readProject, stateDir, getenv, ui, logger, perms)
	listing := files.ListRoot(ws, 40)
	// The Markdown commands are indexed (and capped): completion answers
	// from the index and never waits for a scan of a huge folder.
	userCommands := agent.NewCommandIndex(userCommandDirs(ws, cfg.ConfigDir), agent.Commands)
	userCommands.Notify = func(msg string) { ui.Notify(msg, agent.LevelWarn) }
	userCommands.Refresh()
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
		Edits:     cfg.Edits,
		Root:      ws.Root,
		// Instruction files are read again for every new system message
		// (a new conversation, /reload-instructions), never mid-conversation.
		SystemPrompt: func() string {
			files, problems := agent.LoadInstructions(ws.Sandbox.ReadOwnFile, filepath.Join(cfg.ConfigDir, "AGENTS.md"), confined.ReadPath)
			for _, p := range problems {
				logger.Printf("instructions: %s", p)
			}
			return agent.BuildSystemPrompt(agent.PromptInput{Root: ws.Root, Listing: listing, ToolNames: names, Instructions: files})
		},
		UserCommands:    userCommands.List,
		UserCommand:     userCommands.Find,
		Plans:           store,
		Workspace:       ws,
		SuspendDir:      filepath.Join(stateDir, "suspends"),
		Undo:            func(n int) []string { return undoLines(undo, n) },
		UndoRevert:      ws.RevertLast,
		ContextBudget:   cfg.ContextTokens,
		Conversations:   conversationStore(stateDir),
		Permissions:     perms,
		Models:          provider.Models,
		PreferredModels: cfg.PreferredModels,
		FixedBudget:     cfg.ContextTokens > 0,
		// A subdirectory's AGENTS.md joins the first tool result that
		// reaches into it.
		NestedInstructions: ws.Sandbox.ReadOwnFile,
		Resume:             cfg.Resume,
		MissingKey:         missing,
		Catalog:            servers,
		Commands:           &mcpCommands{m: servers, ui: ui, session: func() *agent.Session { return session }, load: loadMCP},
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
		// The list is kept for /model and its completion.
		go func() {
			model, n, err := session.BudgetFromModelList(context.Background())
			if err != nil {
				logger.Printf("context budget stays at %d tokens: %v", agent.DefaultContextBudget, err)
				return
			}
			logger.Printf("context budget: %d tokens (%s has %d)", n*3/4, model, n)
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

// conversationStore keeps the workspace's conversations; the API keys never
// reach its files.
func conversationStore(stateDir string) *agent.ConversationStore {
	dir := filepath.Join(stateDir, "conversations")
	// Made now, with the rest of the state directory, rather than when the
	// first message is saved (Create reports a failure then).
	_ = os.MkdirAll(dir, 0o700)
	cs := agent.NewConversationStore(dir)
	cs.Scrub = secret.Redact
	return cs
}

// userCommandDirs are the folders of Markdown-defined slash commands, in
// order of precedence; the workspace's are read through the sandbox.
func userCommandDirs(ws *workspace.Workspace, configDir string) []agent.CommandDir {
	inWorkspace := func(dir string) agent.CommandDir {
		return agent.CommandDir{Dir: filepath.Join(ws.Root, dir), Read: func(rel string, limit int64) ([]byte, error) {
			return ws.Sandbox.ReadOwnFile(filepath.ToSlash(filepath.Join(dir, rel)), limit)
		}, Walk: ws.Sandbox.WalkDir, Stat: ws.Sandbox.Stat}
	}
	return []agent.CommandDir{
		inWorkspace(".fido/commands"),
		{Dir: filepath.Join(configDir, "commands")},
		inWorkspace(".claude/commands"),
	}
}

// undoLines formats the newest n undo-log entries for /undo.
func undoLines(undo *workspace.UndoLog, n int) []string {
	var out []string
	for i, e := range undo.Entries() {
		if i == n {
			break
		}
		line := fmt.Sprintf("%s  %s %s %s", e.Time.Local().Format("2006-01-02 15:04:05"), e.Tool, e.Op, e.Path)
		if e.Pending {
			line += " (interrupted: Fido stopped during this change; /undo revert checks whether it happened)"
		}
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
