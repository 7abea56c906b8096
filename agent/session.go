package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fido-nvim/fido/plan"
	"github.com/fido-nvim/fido/tools"
)

// NewSession builds the system prompt once and, when a plan was saved,
// restores it as a synthetic update_plan call and result right after it.
func NewSession(cfg SessionConfig) (*Session, error) {
	if cfg.Provider == nil || cfg.Screen == nil || cfg.Prompter == nil || cfg.SystemPrompt == nil {
		return nil, errors.New("agent: session needs a provider, a screen, a prompter and a system prompt")
	}
	s := &Session{cfg: cfg, screen: cfg.Screen, prompt: cfg.Prompter, editor: cfg.Editor, files: tools.NewFileTracker(cfg.SeenFiles)}
	s.modes = &settings{model: cfg.Model, reasoning: cfg.Reasoning, budget: cfg.ContextBudget, fixed: cfg.FixedBudget,
		lister: cfg.Models, preferred: cfg.PreferredModels}
	s.slot = newTurnSlot(cfg.Screen)
	s.usage = &meter{screen: cfg.Screen}
	s.tools = &convTools{base: cfg.Registry, catalog: cfg.Catalog, read: cfg.NestedInstructions, screen: cfg.Screen}
	s.trust = newEditTrust(cfg.Edits, cfg.Workspace, s.modes, cfg.Prompter, cfg.Editor)
	msgs := []Message{{Role: RoleSystem, Content: cfg.SystemPrompt()}}
	var restored *plan.Plan
	if cfg.Plans != nil {
		if restored = cfg.Plans.Current(); restored != nil {
			msgs = append(msgs, PlanRestoreMessages(*restored)...)
		}
	}
	s.hist = newHistory(msgs, cfg.ConversationID)
	s.log = &convLog{store: cfg.Conversations, root: cfg.Root, hist: s.hist, modes: s.modes, files: s.files, screen: cfg.Screen}
	s.cmds = newCommandTable(s)
	if restored != nil {
		s.screen.Plan(restored)
	}
	s.screen.Info(s.info())
	s.screen.SetState(StateIdle)
	s.screen.Usage(Usage{}, Usage{})
	if cfg.Conversations != nil && cfg.Resume {
		s.resumeNewest()
	}
	return s, nil
}

// The session as its front end and the delegate tool see it.

// Messages returns a deep copy of the conversation.
func (s *Session) Messages() []Message { return s.hist.snapshot() }

// SeenFiles returns what the conversation saw of each file: the content
// hash as of the model's last read or Fido's last write, by workspace path.
func (s *Session) SeenFiles() map[string]string { return s.files.Snapshot() }

// Totals returns all usage (main + subagents) and the subagent part.
func (s *Session) Totals() (total, subagent Usage) { return s.usage.totals() }

// Busy reports whether a turn is running.
func (s *Session) Busy() bool { return s.slot.busy() }

// Wait blocks until the running turn (if any) has finished.
func (s *Session) Wait() { s.slot.wait() }

// ConversationID is the current conversation's id ("" before it is saved).
func (s *Session) ConversationID() string { return s.log.id() }

// Model is the current model id.
func (s *Session) Model() string { return s.modes.Model() }

// Reasoning returns the current effort ("" = model default).
func (s *Session) Reasoning() string { return s.modes.Reasoning() }

// Mode is the current approval mode.
func (s *Session) Mode() string { return s.modes.Mode() }

// SlashModels lists model ids for completion (from the cached list).
func (s *Session) SlashModels() []string { return s.modes.modelIDs() }

// Registry is the tool registry of the current conversation: the built-in
// tools plus, once the conversation's first request fixed them, the
// catalog's. Subagents advertise and call the same.
func (s *Session) Registry() *tools.Registry { return s.tools.registry() }

// ResetTools drops the conversation's fixed catalog: the next request takes
// a new one (its tool list, and so the cached prompt prefix, may change).
func (s *Session) ResetTools() { s.tools.reset() }

// SubagentHook is the hook a subagent's tool results pass through: the
// nested AGENTS.md the parent gets, starting from what its fork carries.
// nil: none.
func (s *Session) SubagentHook(fork []Message) func(ToolCall, tools.Result) tools.Result {
	if s.cfg.NestedInstructions == nil {
		return nil
	}
	return NestedHook(s.cfg.NestedInstructions, fork)
}

// SetContextBudget changes the context budget (estimated tokens; negative:
// never shrink), e.g. once the model's real context window is known.
func (s *Session) SetContextBudget(tokens int) {
	s.modes.setBudget(tokens)
	s.screen.Info(s.info()) // the context gauge follows
}

// AddSubagentUsage adds a subagent's model usage to the totals and to the
// separate subagent totals.
func (s *Session) AddSubagentUsage(u Usage) { s.usage.addSubagent(u) }

// SubagentStatus forwards a subagent bar update; the final state stays shown
// until the next user turn starts.
func (s *Session) SubagentStatus(st *SubagentStatus) {
	s.slot.showSubagent(st != nil)
	s.screen.Subagent(st)
}

// Submit starts a turn with text, or runs a local /command. It never blocks.
func (s *Session) Submit(text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	if strings.HasPrefix(text, "/") {
		s.dispatch(text, false)
		return
	}
	s.submitMessage(text)
}

// Close cancels any turn and releases the saved conversation; later
// submissions are ignored.
func (s *Session) Close() {
	s.slot.close()
	total, _ := s.usage.totals()
	s.log.close(total.Cost)
}

// Plan handles :FidoPlan [arg].
func (s *Session) Plan(arg string) {
	switch strings.TrimSpace(arg) {
	case "", "show":
		if s.editor != nil {
			s.editor.ShowPlan(true)
		}
	case "clear":
		s.ClearPlan()
	default:
		s.screen.Notify(fmt.Sprintf("FidoPlan: unknown argument %q (use :FidoPlan, :FidoPlan clear, hide or toggle)", arg), LevelWarn)
	}
}

// BudgetFromModelList reads the model list (kept for /model) and sizes the
// context budget to 3/4 of the current model's window: room for the answer
// and for the size estimate's error.
func (s *Session) BudgetFromModelList(ctx context.Context) (model string, window int, err error) {
	list, err := s.modes.models(ctx, false)
	if err != nil {
		return "", 0, err
	}
	model = s.modes.Model()
	for _, m := range list {
		if m.ID == model && m.Context > 0 {
			s.SetContextBudget(m.Context * 3 / 4)
			return model, m.Context, nil
		}
	}
	return model, 0, fmt.Errorf("model list: no context length for %s", model)
}

// SlashCommands lists the built-in commands and then the user's own, for
// completion.
func (s *Session) SlashCommands() []Command { return s.cmds.completion() }
