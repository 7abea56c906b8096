package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestReduceEveryTransition(t *testing.T) {
	all := []TurnState{StateIdle, StateConnecting, StateThinking, StateWorking, StateStreaming}
	want := map[TurnEvent]func(from TurnState) TurnState{
		EvTurnStart: func(TurnState) TurnState { return StateConnecting },
		EvDone:      func(TurnState) TurnState { return StateIdle },
		EvCancel:    func(TurnState) TurnState { return StateIdle },
		EvError:     func(TurnState) TurnState { return StateIdle },
		EvRequest:   activeOr(StateConnecting),
		EvReasoning: activeOr(StateThinking),
		EvToolCall:  activeOr(StateWorking),
		EvContent:   activeOr(StateStreaming),
	}
	for ev, f := range want {
		for _, from := range all {
			assert.Equal(t, f(from), Reduce(from, ev), "%s --%s-->", from, ev)
		}
	}
}

func activeOr(to TurnState) func(TurnState) TurnState {
	return func(from TurnState) TurnState {
		if from == StateIdle {
			return StateIdle
		}
		return to
	}
}

// The sequences the seed README names.
func TestReduceSequences(t *testing.T) {
	tests := []struct {
		name   string
		events []TurnEvent
		labels []TurnState
	}{
		{"plain answer", []TurnEvent{EvTurnStart, EvContent, EvContent, EvDone},
			[]TurnState{StateConnecting, StateStreaming, StateStreaming, StateIdle}},
		{"reasoning first", []TurnEvent{EvTurnStart, EvReasoning, EvContent, EvDone},
			[]TurnState{StateConnecting, StateThinking, StateStreaming, StateIdle}},
		{"with a tool", []TurnEvent{EvTurnStart, EvReasoning, EvToolCall, EvRequest, EvContent, EvDone},
			[]TurnState{StateConnecting, StateThinking, StateWorking, StateConnecting, StateStreaming, StateIdle}},
		{"newest wins", []TurnEvent{EvTurnStart, EvContent, EvReasoning},
			[]TurnState{StateConnecting, StateStreaming, StateThinking}},
		{"cancel is terminal", []TurnEvent{EvTurnStart, EvReasoning, EvCancel, EvContent},
			[]TurnState{StateConnecting, StateThinking, StateIdle, StateIdle}},
		{"error is terminal", []TurnEvent{EvTurnStart, EvError, EvToolCall},
			[]TurnState{StateConnecting, StateIdle, StateIdle}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := StateIdle
			for i, ev := range tt.events {
				s = Reduce(s, ev)
				assert.Equal(t, tt.labels[i], s, "after event %d (%s)", i, ev)
			}
		})
	}
}

func TestLabel(t *testing.T) {
	assert.Equal(t, "idle", StateIdle.Label())
	assert.Equal(t, "thinking…", StateThinking.Label())
}
