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

func newSettings(cfg SessionConfig) *settings {
	return &settings{model: cfg.Model, reasoning: cfg.Reasoning, budget: cfg.ContextBudget, fixed: cfg.FixedBudget,
		lister: cfg.Models, preferred: cfg.PreferredModels}
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
