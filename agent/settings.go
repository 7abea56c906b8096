package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// settings are the session's modes and models: the approval mode (/mode),
// the model (/model) and its list, the reasoning effort (/reasoning) and
// the context budget that follows the model's window. Its lock guards only
// these.
type settings struct {
	mu        sync.Mutex
	model     string
	reasoning string
	// mode is the approval mode (/mode). The model hears of it through a
	// note on the next user message (never in the system message) whenever
	// the conversation it sees does not already say so (modeNote).
	mode string
	// budget is the context budget in estimated tokens (0: the default,
	// negative: never shrink); fixed: the user set it, so switching models
	// keeps it.
	budget int
	fixed  bool
	// list caches the endpoint's model list (/model); lister reads it,
	// preferred (setup({ models })) come first in it.
	list      []ModelInfo
	lister    ModelLister
	preferred []string
}

// ReasoningLevels are the accepted efforts; "default" clears the setting.
var ReasoningLevels = []string{"minimal", "low", "medium", "high"}

// Model is the current model id.
func (st *settings) Model() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.model
}

// Reasoning is the current effort ("" = model default).
func (st *settings) Reasoning() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.reasoning
}

// snapshot is the model, the effort and the mode at one instant.
func (st *settings) snapshot() (model, reasoning, mode string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.model, st.reasoning, st.modeLocked()
}

// Mode is the mode as shown (""/unset is default).
func (st *settings) Mode() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.modeLocked()
}

func (st *settings) modeLocked() string {
	if st.mode == "" {
		return ModeDefault
	}
	return st.mode
}

// contextBudget is the budget in estimated tokens; 0: never shrink.
func (st *settings) contextBudget() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case st.budget < 0:
		return 0
	case st.budget == 0:
		return DefaultContextBudget
	}
	return st.budget
}

func (st *settings) setBudget(tokens int) {
	st.mu.Lock()
	st.budget = tokens
	st.mu.Unlock()
}

// setReasoning sets the effort ("default" clears it); the error says why
// arg is not one.
func (st *settings) setReasoning(arg string) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case arg == "default":
		st.reasoning = ""
	case contains(ReasoningLevels, arg):
		st.reasoning = arg
	default:
		return fmt.Errorf("%q is not one of %s, default", arg, strings.Join(ReasoningLevels, ", "))
	}
	return nil
}

// setMode sets the approval mode; changed is false when it already was.
func (st *settings) setMode(arg string) (changed bool, err error) {
	if !contains(Modes, arg) {
		return false, fmt.Errorf("%q is not one of %s", arg, strings.Join(Modes, ", "))
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	changed = st.modeLocked() != arg
	st.mode = arg
	return changed, nil
}

// useModel makes id the model of the next requests and returns the one
// before; the context budget follows its window (unless it was fixed).
func (st *settings) useModel(id string, window int) (old string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	old, st.model = st.model, id
	if window > 0 && !st.fixed {
		st.budget = window * 3 / 4
	}
	return old
}

// adopt takes a resumed conversation's model and mode ("" keeps them).
func (st *settings) adopt(model, mode string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if model != "" {
		st.model = model
	}
	if mode != "" {
		st.mode = mode
	}
}

// models returns the model list, cached for the session (refresh: fetch
// again). Models named in setup({ models }) come first.
func (st *settings) models(ctx context.Context, refresh bool) ([]ModelInfo, error) {
	st.mu.Lock()
	cached := st.list
	st.mu.Unlock()
	if cached != nil && !refresh {
		return cached, nil
	}
	if st.lister == nil {
		return nil, errors.New("this endpoint has no model list")
	}
	list, err := st.lister(ctx)
	if err != nil {
		return nil, err
	}
	out := preferredFirst(list, st.preferred)
	st.mu.Lock()
	st.list = out
	st.mu.Unlock()
	return out, nil
}

// modelIDs lists the cached model ids (completion).
func (st *settings) modelIDs() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make([]string, 0, len(st.list))
	for _, m := range st.list {
		out = append(out, m.ID)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Modes (/mode). In plan mode the invocation guard refuses every mutating
// tool and bash_exec, as it does for subagents; auto-edit applies edits
// without review even when /edits review is on.
const (
	ModeDefault  = "default"
	ModePlan     = "plan"
	ModeAutoEdit = "auto-edit"
)

// Modes lists the accepted modes.
var Modes = []string{ModeDefault, ModePlan, ModeAutoEdit}

// modeNotes tell the model of a mode change, with the next user message.
// Each must stay distinct: modeKnown finds them in the history.
var modeNotes = map[string]string{
	ModePlan:     "\n\n[Fido: the user switched to plan mode: only read, search, update the plan, ask and delegate; patch, rm, rmdir, mkdir, bash_exec, javascript_execute and other changing tools are refused until the user switches back]",
	ModeDefault:  "\n\n[Fido: the user switched back to the default mode: changing tools work again (with the usual approvals)]",
	ModeAutoEdit: "\n\n[Fido: the user switched to auto-edit mode: file edits apply without review; commands still need approval]",
}

// modeKnown is the mode the model was last told of in msgs: the newest
// mode note on a user message, or the default mode when none has one (a
// conversation starts in it as far as the model knows).
func modeKnown(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != RoleUser {
			continue
		}
		known, at := "", -1
		for mode, note := range modeNotes {
			if j := strings.LastIndex(msgs[i].Content, note); j > at {
				known, at = mode, j
			}
		}
		if known != "" {
			return known
		}
	}
	return ModeDefault
}

// modeNote is what the next user message adds so that the model knows the
// mode: nothing when msgs already tell it, else the note for mode. So a
// change and its undoing before the next message tell nothing, and a
// conversation that does not carry the change (a /new in plan mode, one
// resumed after a /mode its user never sent a message under, one rewound
// or compacted past the note) is told with its next message.
func modeNote(msgs []Message, mode string) string {
	if modeKnown(msgs) == mode {
		return ""
	}
	return modeNotes[mode]
}

// ModelInfo is one entry of the endpoint's model list.
type ModelInfo struct {
	ID      string
	Context int // tokens; 0 when the list does not say
	// PromptPrice and CompletionPrice are dollars per million tokens (-1:
	// not listed).
	PromptPrice, CompletionPrice float64
	// Tools says whether the model supports tool calls (false when the list
	// does not say).
	Tools bool
}

// ModelLister reads the endpoint's model list (the provider's, e.g.
// openrouter.Provider.Models); the session keeps it for /model.
type ModelLister func(ctx context.Context) ([]ModelInfo, error)

// preferredFirst lists the preferred models the endpoint has first, in the
// order the user gave them, then the rest in the endpoint's order.
func preferredFirst(list []ModelInfo, preferred []string) []ModelInfo {
	out := make([]ModelInfo, 0, len(list))
	taken := make([]bool, len(list))
	for _, id := range preferred {
		for i, m := range list {
			if !taken[i] && m.ID == id {
				out, taken[i] = append(out, m), true
				break
			}
		}
	}
	for i, m := range list {
		if !taken[i] {
			out = append(out, m)
		}
	}
	return out
}
