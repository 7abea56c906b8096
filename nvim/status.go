package nvim

import (
	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/plan"
)

// UsageStatus is a usage total as Lua sees it.
type UsageStatus struct {
	Calls      int     `msgpack:"calls"`
	Input      int64   `msgpack:"input"`
	Output     int64   `msgpack:"output"`
	CacheRead  int64   `msgpack:"cache_read"`
	CacheWrite int64   `msgpack:"cache_write"`
	Cost       float64 `msgpack:"cost"`
}

// SubagentStatusView is the status table's subagent entry.
type SubagentStatusView struct {
	AgentID   string `msgpack:"agent_id"`
	Phase     string `msgpack:"phase"`
	Detail    string `msgpack:"detail"`
	ElapsedMS int64  `msgpack:"elapsed_ms"`
}

// Status is the snapshot behind require("fido").status().
type Status struct {
	State         string        `msgpack:"state"`
	Model         string        `msgpack:"model"`
	Reasoning     string        `msgpack:"reasoning"`
	Root          string        `msgpack:"root"`
	Edits         string        `msgpack:"edits"`
	Context       ContextStatus `msgpack:"context"`
	Mode          string        `msgpack:"mode"`
	Usage         UsageStatus   `msgpack:"usage"`
	SubagentUsage UsageStatus   `msgpack:"subagent_usage"`
	Plan          *plan.Plan    `msgpack:"plan,omitempty"`
	// Sandbox is how bash_exec runs commands (shell.BashTool.SandboxState).
	Sandbox  SandboxStatus       `msgpack:"sandbox"`
	Subagent *SubagentStatusView `msgpack:"subagent,omitempty"`
	// Flushes counts the batches the host sent so far (this one included).
	Flushes int64 `msgpack:"flushes"`
}

// SandboxStatus is status().sandbox: state is "on" or "auto" (commands
// run sandboxed), "off" (the user turned it off), "unavailable" (this
// machine cannot enforce it) or "" (not known yet); summary is one line of
// what is enforced.
type SandboxStatus struct {
	State   string `msgpack:"state"`
	Summary string `msgpack:"summary"`
}

// ContextStatus is status().context: the estimated size of the next request
// and the budget it is kept under, in tokens.
type ContextStatus struct {
	Used  int `msgpack:"used"`
	Limit int `msgpack:"limit"`
}

func usageStatus(u agent.Usage) UsageStatus {
	return UsageStatus{Calls: u.Calls, Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Cost: u.Cost}
}

// statusSurface is the status table (the statusline and status() read it):
// the session's state, model, usage and subagent. The plan is not part of
// it; the plan surface sends status().plan when the plan changes. Not safe
// for concurrent use (UI guards it).
type statusSurface struct {
	st    Status // Plan and Flushes stay zero here
	dirty bool   // changed since the last batch
}

func newStatusSurface() statusSurface {
	return statusSurface{st: Status{State: string(agent.StateIdle)}, dirty: true}
}

func (s *statusSurface) info(i agent.SessionInfo) {
	s.st.Model, s.st.Reasoning, s.st.Root = i.Model, i.Reasoning, i.Root
	s.st.Edits = i.Edits
	s.st.Context = ContextStatus{Used: i.ContextUsed, Limit: i.ContextLimit}
	s.st.Mode = i.Mode
	s.dirty = true
}

func (s *statusSurface) state(st agent.TurnState) {
	s.st.State = string(st)
	s.dirty = true
}

func (s *statusSurface) usage(total, subagent agent.Usage) {
	s.st.Usage, s.st.SubagentUsage = usageStatus(total), usageStatus(subagent)
	s.dirty = true
}

// sandbox records how commands run.
func (s *statusSurface) sandbox(state, summary string) {
	s.st.Sandbox = SandboxStatus{State: state, Summary: summary}
	s.dirty = true
}

// subagent shows the running subagent (nil: none).
func (s *statusSurface) subagent(sub *agent.SubagentStatus) {
	s.st.Subagent = nil
	if sub != nil {
		s.st.Subagent = &SubagentStatusView{AgentID: sub.AgentID, Phase: sub.Phase, Detail: sub.Detail,
			ElapsedMS: sub.Elapsed.Milliseconds()}
	}
	s.dirty = true
}

// take puts the status into b when it changed; flushes is b's number.
func (s *statusSurface) take(b *Batch, flushes int64) {
	if !s.dirty {
		return
	}
	st := s.st
	st.Flushes = flushes
	b.Status = &st
	s.dirty = false
}
