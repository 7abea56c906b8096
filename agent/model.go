package agent

import (
	"context"
	"fmt"
	"strings"
)

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

// modelLabel is a /model picker line: id, window, prices, tool support.
func modelLabel(m ModelInfo) string {
	parts := []string{m.ID}
	if m.Context > 0 {
		parts = append(parts, fmt.Sprintf("%dk ctx", m.Context/1000))
	}
	if m.PromptPrice >= 0 && m.CompletionPrice >= 0 {
		parts = append(parts, fmt.Sprintf("$%.2f/$%.2f per M", m.PromptPrice, m.CompletionPrice))
	}
	if m.Tools {
		parts = append(parts, "tools")
	} else {
		parts = append(parts, "no tool support listed")
	}
	return strings.Join(parts, " · ")
}

// models returns the model list, cached for the session (refresh: fetch
// again). Models named in setup({ models }) come first.
func (s *Session) models(ctx context.Context, refresh bool) ([]ModelInfo, error) {
	s.mu.Lock()
	cached := s.modelList
	s.mu.Unlock()
	if cached != nil && !refresh {
		return cached, nil
	}
	if s.cfg.Models == nil {
		return nil, fmt.Errorf("this endpoint has no model list")
	}
	list, err := s.cfg.Models(ctx)
	if err != nil {
		return nil, err
	}
	out := preferredFirst(list, s.cfg.PreferredModels)
	s.mu.Lock()
	s.modelList = out
	s.mu.Unlock()
	return out, nil
}

// setModel runs /model [id|refresh].
func (s *Session) setModel(arg string) {
	ctx := context.Background()
	arg = strings.TrimSpace(arg)
	list, err := s.models(ctx, arg == "refresh")
	if arg == "" || arg == "refresh" {
		if err != nil {
			s.ui.Error("/model: the model list is not available (" + err.Error() + "); /model {id} switches directly")
			return
		}
		labels := make([]string, len(list))
		for i, m := range list {
			labels[i] = modelLabel(m)
		}
		idx, err := s.ui.Select(ctx, "Switch to which model? (now "+s.model()+")", labels)
		if err != nil || idx < 0 || idx >= len(list) {
			return
		}
		s.switchModel(list[idx].ID, list[idx].Context)
		return
	}
	if err != nil {
		// Without a list the id cannot be checked: take the user's word.
		s.ui.Notice("the model list is not available (" + err.Error() + "); switching without checking the id")
		s.switchModel(arg, 0)
		return
	}
	for _, m := range list {
		if m.ID == arg {
			s.switchModel(m.ID, m.Context)
			return
		}
	}
	s.ui.Error(fmt.Sprintf("/model: %q is not in the endpoint's model list; the model stays %s (/model lists them, /model refresh reloads the list)", arg, s.model()))
}

// switchModel makes id the model of the next requests; the context budget
// follows its window (unless FIDO_CONTEXT_TOKENS fixed it).
func (s *Session) switchModel(id string, window int) {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		s.ui.Error("/model: a turn is running; wait for it or cancel it first")
		return
	}
	old := s.cfg.Model
	s.cfg.Model = id
	if window > 0 && !s.cfg.FixedBudget {
		s.cfg.ContextBudget = window * 3 / 4
	}
	info := s.info()
	s.mu.Unlock()
	s.ui.Info(info)
	s.save(func(l *ConversationLog) error { return l.SetMeta("", id, 0) }, Message{})
	if old == id {
		s.ui.Notice("model: " + id + " (unchanged)")
		return
	}
	s.ui.Notice(fmt.Sprintf("model: %s (was %s); the provider's cache starts cold for it", id, old))
}

// BudgetFromModelList reads the model list (kept for /model) and sizes the
// context budget to 3/4 of the current model's window: room for the answer
// and for the size estimate's error.
func (s *Session) BudgetFromModelList(ctx context.Context) (model string, window int, err error) {
	list, err := s.models(ctx, false)
	if err != nil {
		return "", 0, err
	}
	model = s.model()
	for _, m := range list {
		if m.ID == model && m.Context > 0 {
			s.SetContextBudget(m.Context * 3 / 4)
			return model, m.Context, nil
		}
	}
	return model, 0, fmt.Errorf("model list: no context length for %s", model)
}

// Model is the current model id.
func (s *Session) Model() string { return s.model() }

// SlashModels lists model ids for completion (from the cached list).
func (s *Session) SlashModels() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.modelList))
	for _, m := range s.modelList {
		out = append(out, m.ID)
	}
	return out
}

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
