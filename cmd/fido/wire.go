package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/agent/conversation"
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
	"github.com/fido-nvim/fido/tools/mcp"
	"github.com/fido-nvim/fido/tools/permission"
	"github.com/fido-nvim/fido/tools/secret"
	"github.com/fido-nvim/fido/tools/shell"
	"github.com/fido-nvim/fido/tools/web"
	"github.com/fido-nvim/fido/tools/workspace"
)

// serveRPC serves Neovim on stdio and, once the connection is up, builds
// Fido's core for it (builder) with Neovim as the front end.
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
			b := &builder{cfg: cfg, root: root, getenv: getenv, logger: logger, front: ui, surface: ui, editor: editor}
			core, err := b.build()
			for _, p := range keyProblems {
				ui.Error(p)
			}
			if err != nil {
				return nil, err
			}
			return core, nil
		},
	})
}

// frontEnd is what every front end gives the core: a screen, a prompter
// for questions and approvals, and an expert asker (ask_an_expert).
type frontEnd interface {
	agent.Screen
	tools.Prompter
	ask.ExpertAsker
}

// builder is the composition root: it assembles one Fido core for a front
// end in three steps, each filling its part: openState (the workspace and
// its state directory: undo log, plan, command rules), buildTools (the
// provider and the tool registry, MCP servers included) and
// configureSession (the session with its instructions, commands and
// conversations). Neovim's host uses it with nvim.UI; a headless front end
// (`fido acp`, the catalog test) leaves surface and editor nil.
type builder struct {
	cfg    agent.Config
	root   string
	getenv func(string) string
	logger *log.Logger
	front  frontEnd
	// surface is the editor's own surface (windows, input); editor its
	// buffers and language servers. Both nil: headless.
	surface agent.EditorSurface
	editor  tools.Editor

	// openState
	stateDir string
	undo     *workspace.UndoLog
	ws       *workspace.Workspace
	plans    *plan.Store
	perms    *permission.Store
	// buildTools
	provider *openrouter.Provider
	registry *tools.Registry
	delegate *delegate.Tool
	mcp      *mcp.Manager
	loadMCP  func() []mcp.ServerConfig
	// sandboxCleanup removes the sandbox's temp dirs with the session.
	sandboxCleanup func()
}

// build runs the three steps; the core it returns ends the MCP servers
// with the session.
func (b *builder) build() (*backend, error) {
	if err := b.openState(); err != nil {
		return nil, err
	}
	if err := b.buildTools(); err != nil {
		return nil, err
	}
	session, err := b.configureSession()
	if err != nil {
		b.mcp.Close()
		b.sandboxCleanup()
		return nil, err
	}
	return &backend{Session: session, mcp: b.mcp, cleanup: b.sandboxCleanup}, nil
}

// openState opens the workspace and its state: the state directory, the
// undo log, the sandbox, the plan store and the command rules.
func (b *builder) openState() error {
	b.stateDir = b.cfg.WorkspaceStateDir(b.root)
	if err := os.MkdirAll(b.stateDir, 0o755); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	undo, err := workspace.OpenUndoLog(filepath.Join(b.stateDir, "undo.json"))
	if err != nil {
		if undo == nil {
			return err
		}
		b.front.Notify(err.Error(), agent.LevelWarn)
	}
	b.undo = undo
	if b.ws, err = workspace.New(b.root, b.editor, undo); err != nil {
		return err
	}
	// A skipped ignore file changes what the model sees (its ignored files
	// show up), so the user hears of it once, besides the log.
	b.ws.Sandbox.Logf = func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		b.logger.Print(msg)
		b.front.Notify("Fido "+msg+"; Fido reads only regular files inside the workspace", agent.LevelWarn)
	}
	store, notice, err := plan.OpenStore(filepath.Join(b.stateDir, "plan.json"))
	if err != nil {
		return err
	}
	if notice != "" {
		b.front.Notify(notice, agent.LevelWarn)
	}
	b.plans = store
	for _, w := range b.cfg.Warnings {
		b.front.Notify("Fido: "+w, agent.LevelWarn)
	}
	perms, notice := permission.OpenStore(filepath.Join(b.stateDir, "permissions.json"), b.cfg.Permissions)
	if notice != "" {
		b.front.Notify("Fido: "+notice, agent.LevelWarn)
	}
	b.perms = perms
	return nil
}

// buildTools makes the provider and the registry: the workspace tools, the
// plan, the delegate (attached to the session once it exists), the ask
// tools, web, JavaScript, the shell and the LSP tools, then starts the MCP
// servers, whose tools join each conversation's catalog.
func (b *builder) buildTools() error {
	ws, front := b.ws, b.front
	// A slow stream is read once per flush of the screen, not once per piece.
	b.provider = openrouter.New(openrouter.Config{BaseURL: b.cfg.BaseURL, APIKey: b.cfg.APIKey, IdleTimeout: b.cfg.IdleTimeout,
		ReadPace: nvim.FlushInterval})
	updatePlan := plan.NewUpdateTool(b.plans, func(p plan.Plan) { front.Plan(&p) })
	b.delegate = delegate.NewTool(delegate.Config{Provider: b.provider})
	all := append(files.Tools(ws), updatePlan, b.delegate, ask.NewAskExpertTool(front))
	all = append(all, web.Tools(web.Config{BaseURL: b.cfg.TavilyURL, APIKey: b.cfg.TavilyKey})...)
	jsTool := js.NewJSTool(ws, front)
	jsTool.Prewarm() // its worker process starts now, not during the first call
	// One rule set decides commands, JS network access and MCP tools.
	jsTool.WithPermissions(b.perms)
	sbx, sbxWarning, sbxCleanup := sandboxSetup(b.cfg, b.stateDir, b.getenv)
	if sbxWarning != "" {
		front.Notify(sbxWarning, agent.LevelWarn)
	}
	b.sandboxCleanup = sbxCleanup
	bash := shell.NewBashTool(ws, front).WithPermissions(b.perms).WithSandbox(sbx)
	// The probe starts the helper: measured in the background, not while
	// the host starts (the first command waits for it if need be).
	go reportSandbox(bash, sbx.Mode, front, b.logger.Printf)
	all = append(all, bash, ask.NewAskUserTool(front), jsTool)
	all = append(all, lsp.Tools(ws)...)
	registry, err := tools.NewRegistry(all...)
	if err != nil {
		return err
	}
	// Edits report the LSP diagnostics they introduced (Neovim's vim.lsp).
	if err := registry.Intercept("patch", lsp.PatchDiagnostics(ws)); err != nil {
		return err
	}
	if err := registry.Intercept("bash_exec", lsp.BashDiagnostics(ws)); err != nil {
		return err
	}
	b.registry = registry
	// .mcp.json is read as Fido reads its own files: a regular file inside
	// the workspace, never a FIFO or a device, at most mcp.MaxConfigFile.
	readProject := func(name string, limit int64) ([]byte, error) { return confined.ReadFile(ws.Sandbox.FS(), name, limit) }
	b.mcp, b.loadMCP = newMCP(ws.Root, readProject, b.stateDir, b.getenv, front, b.logger, b.perms, bash)
	return nil
}

// configureSession makes the session over what the steps before built,
// attaches the delegate tool and the MCP commands to it, and sizes the
// context budget from the model list.
func (b *builder) configureSession() (*agent.Session, error) {
	cfg, ws, front, logger := b.cfg, b.ws, b.front, b.logger
	listing := files.ListRoot(ws, 40)
	// The Markdown commands are indexed (and capped): completion answers
	// from the index and never waits for a scan of a huge folder.
	userCommands := agent.NewCommandIndex(userCommandDirs(ws, cfg.ConfigDir), agent.Commands)
	userCommands.Notify = func(msg string) { front.Notify(msg, agent.LevelWarn) }
	userCommands.Refresh()
	names := b.registry.Names()
	missing := ""
	if cfg.APIKey == "" {
		missing = agent.MissingKeyMessage
	}
	mcpCmds := &mcpCommands{m: b.mcp, screen: front, load: b.loadMCP}
	session, err := agent.NewSession(agent.SessionConfig{
		Provider:  b.provider,
		Registry:  b.registry,
		Screen:    front,
		Prompter:  front,
		Editor:    b.surface,
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
		Plans:           b.plans,
		Workspace:       ws,
		SuspendDir:      filepath.Join(b.stateDir, "suspends"),
		Undo:            func(n int) []string { return undoLines(b.undo, n) },
		UndoRevert:      ws.RevertLast,
		ContextBudget:   cfg.ContextTokens,
		Conversations:   conversationStore(b.stateDir),
		Permissions:     b.perms,
		Models:          b.provider.Models,
		PreferredModels: cfg.PreferredModels,
		FixedBudget:     cfg.ContextTokens > 0,
		// A subdirectory's AGENTS.md joins the first tool result that
		// reaches into it.
		NestedInstructions: ws.Sandbox.ReadOwnFile,
		Resume:             cfg.Resume,
		MissingKey:         missing,
		Catalog:            b.mcp,
		Commands:           mcpCmds,
	})
	if err != nil {
		return nil, err
	}
	b.delegate.SetParent(session)
	mcpCmds.session = session
	if missing != "" {
		front.Error(missing)
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
	logger.Printf("session ready: root=%s model=%s state=%s tools=%v", ws.Root, cfg.Model, b.stateDir, names)
	return session, nil
}

// backend is the session plus what must end with it: the MCP servers and
// the sandbox's temp dirs.
type backend struct {
	*agent.Session
	mcp     interface{ Close() }
	cleanup func()
}

// Close cancels the session, ends every MCP server's process group and
// removes the sandbox's temp dirs.
func (b *backend) Close() {
	b.Session.Close()
	b.mcp.Close()
	b.cleanup()
}

// conversationStore keeps the workspace's conversations; the API keys never
// reach its files.
func conversationStore(stateDir string) *conversation.Store {
	dir := filepath.Join(stateDir, "conversations")
	// Made now, with the rest of the state directory, rather than when the
	// first message is saved (Create reports a failure then).
	_ = os.MkdirAll(dir, 0o700)
	cs := conversation.NewStore(dir)
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
