package agent

// TurnEvent is an observable event that can move the turn state.
type TurnEvent int

const (
	// EvTurnStart: the user's turn began (request about to be sent).
	EvTurnStart TurnEvent = iota
	// EvRequest: another model request of the same turn is in flight (after tool results).
	EvRequest
	// EvReasoning: a reasoning delta arrived.
	EvReasoning
	// EvToolCall: a tool-call delta arrived or a tool is running.
	EvToolCall
	// EvContent: an answer delta arrived.
	EvContent
	// EvDone: the turn completed.
	EvDone
	// EvCancel: the user cancelled.
	EvCancel
	// EvError: the turn failed.
	EvError
)

func (e TurnEvent) String() string {
	return [...]string{"turn_start", "request", "reasoning", "tool_call", "content", "done", "cancel", "error"}[e]
}

// Reduce is the pure turn-state machine: the newest observable activity wins,
// and done, cancel and error always return to idle. Deltas that arrive while
// idle (late events after a cancel) never revive a turn.
func Reduce(s TurnState, ev TurnEvent) TurnState {
	switch ev {
	case EvDone, EvCancel, EvError:
		return StateIdle
	case EvTurnStart:
		return StateConnecting
	}
	if s == StateIdle {
		return StateIdle
	}
	switch ev {
	case EvRequest:
		return StateConnecting
	case EvReasoning:
		return StateThinking
	case EvToolCall:
		return StateWorking
	case EvContent:
		return StateStreaming
	}
	return s
}

// Label is what the statusline shows for a state.
func (s TurnState) Label() string {
	if s == StateIdle || s == "" {
		return "idle"
	}
	return string(s) + "…"
}
