package agent

import (
	"fmt"
	"sync"
)

// meter keeps a conversation's usage totals: all of it (main and
// subagents) and the subagents' part, shown on every change.
type meter struct {
	mu         sync.Mutex
	total, sub Usage
	screen     interface{ Usage(total, subagent Usage) }
}

// add counts a main-agent request.
func (m *meter) add(u Usage) {
	m.mu.Lock()
	m.total = m.total.Add(u)
	total, sub := m.total, m.sub
	m.mu.Unlock()
	m.screen.Usage(total, sub)
}

// addSubagent counts a subagent's request, in both totals.
func (m *meter) addSubagent(u Usage) {
	m.mu.Lock()
	m.total = m.total.Add(u)
	m.sub = m.sub.Add(u)
	total, sub := m.total, m.sub
	m.mu.Unlock()
	m.screen.Usage(total, sub)
}

func (m *meter) totals() (total, subagent Usage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total, m.sub
}

// reset starts another conversation's totals (a resumed one's cost).
func (m *meter) reset(cost float64) {
	m.mu.Lock()
	m.total, m.sub = Usage{Cost: cost}, Usage{}
	m.mu.Unlock()
}

// turnCost is the line the transcript shows at the end of a turn: what it
// cost and how much of its input the provider's cache served.
func turnCost(before, after Usage) string {
	d := Usage{Calls: after.Calls - before.Calls, Input: after.Input - before.Input, Output: after.Output - before.Output,
		CacheRead: after.CacheRead - before.CacheRead, CacheWrite: after.CacheWrite - before.CacheWrite, Cost: after.Cost - before.Cost}
	line := fmt.Sprintf("turn: $%.4f · %d calls · in %s · out %s · cache read %s", d.Cost, d.Calls, kTokens(d.Input), kTokens(d.Output), kTokens(d.CacheRead))
	if d.CacheWrite > 0 {
		line += " · cache written " + kTokens(d.CacheWrite)
	}
	return line
}

func kTokens(n int64) string {
	if n >= 1000 {
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprintf("%d", n)
}
