package agent

import (
	"reflect"
	"sync"

	"github.com/fido-nvim/fido/agent/conversation"
	"github.com/fido-nvim/fido/tools"
)

// A session's conversation is saved as it happens (conversation.Store): the
// user message when a turn starts, every assistant message and tool result
// as the turn adds it, and a "live" record whenever the conversation was
// rewritten in memory (compaction, shrinking, a plan sync). The system
// message is never saved: a resumed conversation runs under the current one.

// convLog is the current conversation's log and what it holds: the live
// conversation and the seen files as last saved, so a record is written
// only when they changed. The log is created with the conversation's
// first record. A failed write is reported once; the conversation goes on
// in memory. Its lock is never taken while holding history's or
// settings' (it reads them to seed a new log).
type convLog struct {
	mu        sync.Mutex
	log       *conversation.Log
	savedLive []Message         // the live conversation as the log has it (no system message)
	savedSeen map[string]string // the seen files as the log has them
	failed    bool

	store *conversation.Store // nil: kept in memory only
	root  string
	hist  *history
	modes *settings
	files *tools.FileTracker
	// screen hears of a failed write.
	screen interface{ Error(msg string) }
}

// convRecorder saves a running turn's messages as the loop adds them.
type convRecorder struct{ l *convLog }

func (r convRecorder) Message(m Message, res *tools.Result) {
	var note *conversation.ResultNote
	if res != nil {
		note = &conversation.ResultNote{Summary: res.Summary, IsError: res.IsError}
	}
	r.l.save(func(l *conversation.Log) error { return l.AppendResult(m, note) }, m)
}

func (r convRecorder) ToolStarted(call ToolCall) {
	r.l.save(func(l *conversation.Log) error { return l.ToolStarted(call.ID) }, Message{})
}

// save runs one write on the log (created on first use) and keeps
// savedLive in step; m.Role == "" means no message was added.
func (c *convLog) save(write func(*conversation.Log) error, m Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, seed := c.log, false
	if l == nil {
		if l = c.createLocked(); l == nil {
			return
		}
		seed = true
	}
	// One write and one fsync: a new conversation's first records (its
	// mode, a restored plan, the first message and its title) go together.
	err := l.Batch(func() error {
		if seed {
			c.seedLocked(l)
		}
		return write(l)
	})
	if err != nil {
		c.failedLocked(err)
		return
	}
	if m.Role != "" && m.Role != RoleSystem {
		c.savedLive = append(c.savedLive, m.Clone())
	}
}

// failedLocked tells the user, once, that the conversation is no longer
// saved (the log refuses writes after a failed one).
func (c *convLog) failedLocked(err error) {
	if !c.failed {
		c.failed = true
		c.screen.Error("the conversation could not be saved: " + err.Error())
	}
}

// ensure returns the log, creating the conversation on first use (nil:
// not saved).
func (c *convLog) ensure() *conversation.Log {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.log != nil {
		return c.log
	}
	l := c.createLocked()
	if l != nil {
		_ = l.Batch(func() error { c.seedLocked(l); return nil })
	}
	return l
}

// createLocked creates the conversation's log, or returns nil when
// conversations are not saved or it cannot be created (the user hears of
// it once). Called with no log yet.
func (c *convLog) createLocked() *conversation.Log {
	if c.store == nil || c.failed {
		return nil
	}
	id, _ := c.hist.ident()
	l, err := c.store.Create(id, c.root, c.modes.Model())
	if err != nil {
		c.failed = true
		c.screen.Error("the conversation cannot be saved: " + err.Error())
		return nil
	}
	c.log = l
	c.savedLive = nil
	return l
}

// seedLocked writes what a new log starts with.
func (c *convLog) seedLocked(l *conversation.Log) {
	// The mode the session is in (a /new or a restart in plan mode)
	// belongs to this conversation from its start.
	_ = l.SetMode(c.modes.Mode())
	// What the conversation already holds (a restored plan) comes first.
	for _, m := range c.hist.snapshot() {
		if m.Role != RoleSystem {
			if err := l.Append(m); err == nil {
				c.savedLive = append(c.savedLive, m.Clone())
			}
		}
	}
}

// syncLive records the in-memory conversation as the live one when it no
// longer equals what the log holds (after compaction, shrinking, a plan
// sync or a failed turn that dropped its user message).
func (c *convLog) syncLive(reason string) {
	live := c.hist.snapshot()[1:]
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.log == nil || reflect.DeepEqual(nonEmpty(live), nonEmpty(c.savedLive)) {
		return
	}
	if err := c.log.ReplaceLive(live, reason); err != nil {
		c.failedLocked(err)
		return
	}
	c.savedLive = CloneMessages(live)
}

func nonEmpty(ms []Message) []Message {
	if len(ms) == 0 {
		return nil
	}
	return ms
}

// saveSeen records the read-before-write knowledge when it changed.
func (c *convLog) saveSeen() {
	seen := c.files.Snapshot()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.log == nil || reflect.DeepEqual(seen, c.savedSeen) {
		return
	}
	if err := c.log.SetSeen(seen); err == nil {
		c.savedSeen = seen
	}
}

// endTurn saves what a turn leaves besides its messages (the live history
// when it differs from the log, what was seen of files, the cost), with
// one fsync. Without a log there is nothing to save.
func (c *convLog) endTurn(cost float64) {
	c.mu.Lock()
	l := c.log
	c.mu.Unlock()
	if l == nil {
		return
	}
	err := l.Batch(func() error {
		c.syncLive("end of turn")
		c.saveSeen()
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.log != nil {
			_ = c.log.SetMeta("", "", cost)
		}
		return nil
	})
	if err != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.failedLocked(err)
	}
}

// close saves the cost and releases the conversation.
func (c *convLog) close(cost float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.log != nil {
		_ = c.log.SetMeta("", "", cost)
		_ = c.log.Close()
	}
	c.log, c.savedLive, c.savedSeen, c.failed = nil, nil, nil, false
}

// adopt makes l (a resumed or forked conversation) the current log; live
// and seen are what it holds.
func (c *convLog) adopt(l *conversation.Log, live []Message, seen map[string]string) {
	c.mu.Lock()
	c.log, c.savedLive, c.savedSeen = l, live, seen
	c.mu.Unlock()
}

// id is the saved conversation's id ("" before it is saved).
func (c *convLog) id() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.log == nil {
		return ""
	}
	return c.log.ID()
}

// title is the saved conversation's title ("" before it is saved).
func (c *convLog) title() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.log == nil {
		return ""
	}
	return c.log.Meta().Title
}
