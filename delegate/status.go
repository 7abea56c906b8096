package delegate

import (
	"strings"
	"sync"
	"time"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/text"
)

// Phases of the subagent activity bar besides tool names.
const (
	PhaseStarting  = "starting"
	PhaseReasoning = "reasoning"
	PhaseReviewing = "reviewing"
	PhaseCancelled = "cancelled"
	PhaseNested    = "nested delegation rejected"
)

const maxDetailRunes = 60

// monitor is the subagent loop's Observer. It turns loop events into
// sanitized activity-bar updates (never message text or reasoning), forwards
// usage, and keeps the streamed answer text so a timeout can still return
// what was found. Its methods may be called from the loop goroutine and the
// ticker at once.
type monitor struct {
	mu       sync.Mutex
	id       string
	start    time.Time
	now      func() time.Time
	status   func(*agent.SubagentStatus)
	usage    func(agent.Usage)
	delegate string // name of the delegate tool, to spot nested attempts

	phase, detail string
	sealed        bool
	content       strings.Builder // answer text of the current model call
	lastContent   string          // answer text of the last model call that had any
	total         agent.Usage
}

func newMonitor(id string, now func() time.Time, status func(*agent.SubagentStatus), usage func(agent.Usage), delegateName string) *monitor {
	return &monitor{id: id, start: now(), now: now, status: status, usage: usage, delegate: delegateName}
}

// set moves to a phase; an unchanged phase and detail sends nothing.
func (m *monitor) set(phase, detail string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sealed || (phase == m.phase && detail == m.detail) {
		return
	}
	m.phase, m.detail = phase, detail
	m.emitLocked(false)
}

// tick refreshes the elapsed time.
func (m *monitor) tick() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.sealed && m.phase != "" {
		m.emitLocked(false)
	}
}

// finish shows the final phase; later events change nothing.
func (m *monitor) finish(phase, detail string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sealed {
		return
	}
	m.phase, m.detail = phase, detail
	m.emitLocked(true)
	m.sealed = true
}

func (m *monitor) emitLocked(done bool) {
	if m.status == nil {
		return
	}
	m.status(&agent.SubagentStatus{AgentID: m.id, Phase: m.phase, Detail: m.detail,
		Elapsed: m.now().Sub(m.start), Done: done})
}

// answer is the streamed answer text: the current call's, else the last one's.
func (m *monitor) answer() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.content.String(); strings.TrimSpace(s) != "" {
		return s
	}
	return m.lastContent
}

func (m *monitor) usageTotal() agent.Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total
}

func (m *monitor) ModelCall(iteration int) {
	m.mu.Lock()
	if s := m.content.String(); strings.TrimSpace(s) != "" {
		m.lastContent = s
	}
	m.content.Reset()
	m.mu.Unlock()
	if iteration <= 1 {
		m.set(PhaseStarting, "waiting for the model")
		return
	}
	m.set(PhaseReasoning, "")
}

func (m *monitor) Delta(d agent.Delta) {
	switch d.Kind {
	case agent.DeltaReasoning:
		m.set(PhaseReasoning, "")
	case agent.DeltaContent:
		m.mu.Lock()
		m.content.WriteString(d.Text)
		m.mu.Unlock()
		m.set(PhaseReviewing, "writing the result")
	case agent.DeltaToolCall:
		if d.ToolName != "" {
			m.set(sanitize(d.ToolName, 40), "preparing")
		}
	}
}

func (m *monitor) ToolCall(call agent.ToolCall, summary string) {
	if call.Name == m.delegate {
		// A nested delegate's summary is its task: model text, not shown.
		summary = ""
	}
	m.set(sanitize(call.Name, 40), sanitize(summary, maxDetailRunes))
}

func (m *monitor) ToolResult(call agent.ToolCall, res tools.Result) {
	if call.Name == m.delegate && strings.Contains(res.Content, CodeNestedDelegation) {
		m.set(PhaseNested, "")
	}
}

func (m *monitor) Usage(u agent.Usage) {
	m.mu.Lock()
	m.total = m.total.Add(u)
	m.mu.Unlock()
	if m.usage != nil {
		m.usage(u)
	}
}

// sanitize makes one short line (text.Collapse) of at most n runes.
func sanitize(s string, n int) string { return text.Shorten(text.Collapse(s), n) }
