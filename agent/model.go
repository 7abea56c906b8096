package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/fido-nvim/fido/agent/conversation"
)

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

// cmdMode shows or changes the mode (/mode); the model hears of a change
// with the next user message, and the conversation saves it.
func cmdMode(s *Session, arg string) {
	if arg == "" {
		s.screen.Notice("mode: " + s.modes.Mode() + " (" + strings.Join(Modes, ", ") + ")")
		return
	}
	changed, err := s.modes.setMode(arg)
	if err != nil {
		s.screen.Error("/mode: " + err.Error())
		return
	}
	s.screen.Info(s.info())
	if changed {
		s.log.save(func(l *conversation.Log) error { return l.SetMode(arg) }, Message{})
	}
	s.screen.Notice("mode: " + arg)
}

// cmdReasoning shows or sets the reasoning effort (/reasoning).
func cmdReasoning(s *Session, arg string) {
	if arg != "" {
		if err := s.modes.setReasoning(arg); err != nil {
			s.screen.Error("/reasoning: " + err.Error())
			return
		}
		s.screen.Info(s.info())
	}
	label := s.modes.Reasoning()
	if label == "" {
		label = "model default"
	}
	s.screen.Notice("reasoning effort: " + label)
}
