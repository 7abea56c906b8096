package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/fido-nvim/fido/agent/conversation"
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

// cmdModel runs /model [id|refresh].
func cmdModel(s *Session, arg string) {
	ctx := context.Background()
	list, err := s.modes.models(ctx, arg == "refresh")
	if arg == "" || arg == "refresh" {
		if err != nil {
			s.screen.Error("/model: the model list is not available (" + err.Error() + "); /model {id} switches directly")
			return
		}
		labels := make([]string, len(list))
		for i, m := range list {
			labels[i] = modelLabel(m)
		}
		idx, err := s.prompt.Select(ctx, "Switch to which model? (now "+s.modes.Model()+")", labels)
		if err != nil || idx < 0 || idx >= len(list) {
			return
		}
		switchModel(s, list[idx].ID, list[idx].Context)
		return
	}
	if err != nil {
		// Without a list the id cannot be checked: take the user's word.
		s.screen.Notice("the model list is not available (" + err.Error() + "); switching without checking the id")
		switchModel(s, arg, 0)
		return
	}
	for _, m := range list {
		if m.ID == arg {
			switchModel(s, m.ID, m.Context)
			return
		}
	}
	s.screen.Error(fmt.Sprintf("/model: %q is not in the endpoint's model list; the model stays %s (/model lists them, /model refresh reloads the list)", arg, s.modes.Model()))
}

// switchModel makes id the model of the next requests; the context budget
// follows its window (unless FIDO_CONTEXT_TOKENS fixed it).
func switchModel(s *Session, id string, window int) {
	var old string
	if !s.slot.idle(func() { old = s.modes.useModel(id, window) }) {
		s.screen.Error("/model: a turn is running; wait for it or cancel it first")
		return
	}
	s.screen.Info(s.info())
	s.log.save(func(l *conversation.Log) error { return l.SetMeta("", id, 0) }, Message{})
	if old == id {
		s.screen.Notice("model: " + id + " (unchanged)")
		return
	}
	s.screen.Notice(fmt.Sprintf("model: %s (was %s); the provider's cache starts cold for it", id, old))
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
