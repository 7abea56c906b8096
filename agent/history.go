package agent

import (
	"sync"
	"time"

	"github.com/fido-nvim/fido/agent/conversation"
)

// history is the conversation as the model sees it: its messages
// (messages[0] is the system message), the synthetic ones waiting for the
// running turn to end, the conversation's id (its undo-log entries carry
// it) and its count of user turns. Its lock guards only these; what it
// is saved as is convLog's.
type history struct {
	mu       sync.Mutex
	messages []Message
	pending  []Message // synthetic messages added while a turn runs
	id       string
	turn     int
}

// now is replaceable in tests.
var now = time.Now

func newHistory(msgs []Message, id string) *history {
	if id == "" {
		id = conversation.NewID(now())
	}
	return &history{messages: msgs, id: id}
}

// snapshot is a deep copy of the messages.
func (h *history) snapshot() []Message {
	h.mu.Lock()
	defer h.mu.Unlock()
	return CloneMessages(h.messages)
}

// tokens is the messages' estimated size.
func (h *history) tokens() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return EstimateTokens(h.messages)
}

// userTurns counts the real user messages.
func (h *history) userTurns() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(userTurnStarts(h.messages))
}

// ident is the conversation's id and its newest turn.
func (h *history) ident() (id string, turn int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.id, h.turn
}

func (h *history) setID(id string) {
	h.mu.Lock()
	h.id = id
	h.mu.Unlock()
}

// nextTurn numbers a new user turn.
func (h *history) nextTurn() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.turn++
	return h.turn
}

// replace makes msgs the conversation (compaction, shrinking).
func (h *history) replace(msgs []Message) {
	h.mu.Lock()
	h.messages = msgs
	h.mu.Unlock()
}

// reset makes msgs another conversation's: no synthetic message waits, and
// the turns count on from the newest the messages carry.
func (h *history) reset(msgs []Message, id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.messages, h.pending, h.id, h.turn = msgs, nil, id, 0
	for _, m := range msgs {
		h.turn = max(h.turn, m.Turn)
	}
}

// add appends synthetic messages (a plan sync, a revert note) now.
func (h *history) add(msgs ...Message) {
	h.mu.Lock()
	h.messages = append(h.messages, msgs...)
	h.mu.Unlock()
}

// hold keeps synthetic messages for the end of the running turn.
func (h *history) hold(msgs ...Message) {
	h.mu.Lock()
	h.pending = append(h.pending, msgs...)
	h.mu.Unlock()
}

// commit ends a turn: msgs (nil: the conversation as it was) then what
// waited for the turn's end.
func (h *history) commit(msgs []Message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if msgs != nil {
		h.messages = msgs
	}
	h.messages = append(h.messages, h.pending...)
	h.pending = nil
}

// cut drops the messages from index on and returns how many it dropped.
func (h *history) cut(index int) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	dropped := len(h.messages) - index
	if index < len(h.messages) {
		h.messages = h.messages[:index]
	}
	h.pending = nil
	return dropped
}

// setSystem puts a new system message first; changed is false when it is
// the same.
func (h *history) setSystem(sys string) (changed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	changed = len(h.messages) > 0 && h.messages[0].Content != sys
	if changed {
		h.messages[0] = Message{Role: RoleSystem, Content: sys}
	}
	return changed
}

// fit shrinks the messages to budget (FitBudget) when they are over it.
func (h *history) fit(budget int) (BudgetReport, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fitted, rep, changed := FitBudget(h.messages, budget)
	if changed {
		h.messages = fitted
	}
	return rep, changed
}
