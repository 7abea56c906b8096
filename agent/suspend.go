package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/fido-nvim/fido/agent/conversation"
	"github.com/fido-nvim/fido/tools/confined"
	"github.com/fido-nvim/fido/tools/workspace"
)

// Snapshot is a /suspend file.
type Snapshot struct {
	Version     int       `json:"version"`
	Description string    `json:"description"`
	Created     string    `json:"created"`
	Root        string    `json:"root"`
	Messages    []Message `json:"messages"`
	// Seen is what the conversation saw of each file (content hash by
	// workspace path), so the read-before-write guard survives a resume.
	Seen map[string]string `json:"seen,omitempty"`
	// Conversation is the id its undo-log entries carry (:FidoReview, /rewind).
	Conversation string `json:"conversation,omitempty"`
}

var slugRe = regexp.MustCompile(`[^a-z0-9]+`)

// cmdSuspend saves the conversation as a snapshot (/suspend [description]).
func cmdSuspend(s *Session, desc string) {
	if s.cfg.SuspendDir == "" {
		s.screen.Notice("/suspend is not available: no state directory")
		return
	}
	if desc == "" {
		text, ok, err := s.prompt.Input(context.Background(), "Describe this snapshot: ", "")
		if err != nil || !ok || strings.TrimSpace(text) == "" {
			s.screen.Notice("suspend cancelled")
			return
		}
		desc = strings.TrimSpace(text)
	}
	msgs := s.hist.snapshot()
	id, _ := s.hist.ident()
	snap := Snapshot{Version: 1, Description: desc, Created: now().UTC().Format(time.RFC3339), Root: s.cfg.Root, Messages: msgs,
		Seen: s.files.Snapshot(), Conversation: id}
	slug := strings.Trim(slugRe.ReplaceAllString(strings.ToLower(desc), "-"), "-")
	if len(slug) > 40 {
		slug = slug[:40]
	}
	name := now().UTC().Format("20060102T150405Z") + "-" + slug + ".json"
	path := filepath.Join(s.cfg.SuspendDir, name)
	b, err := json.MarshalIndent(snap, "", " ")
	if err == nil {
		err = workspace.WriteStateFile(path, b, 0o600)
	}
	if err != nil {
		s.screen.Error("could not save the snapshot: " + err.Error())
		return
	}
	s.screen.Notice(fmt.Sprintf("suspended %d messages as %q (%s)", len(msgs), desc, name))
}

// maxSnapshotFile bounds one snapshot /recall reads (a FIFO, a symlink
// leading out of the suspend directory or a larger file is skipped unread and
// named in the "unreadable" notice).
const maxSnapshotFile = 128 << 20

// ListSnapshots returns the snapshot files of dir, newest first.
func ListSnapshots(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	return names, nil
}

// cmdRecall restores a snapshot (/recall); the workspace plan is kept.
func cmdRecall(s *Session, _ string) {
	if s.cfg.SuspendDir == "" {
		s.screen.Notice("/recall is not available: no state directory")
		return
	}
	if s.slot.busy() {
		s.screen.Error("/recall: a turn is running; cancel it first")
		return
	}
	names, err := ListSnapshots(s.cfg.SuspendDir)
	if err != nil {
		s.screen.Error("/recall: " + err.Error())
		return
	}
	if len(names) == 0 {
		s.screen.Notice("no snapshots yet; /suspend saves one")
		return
	}
	snaps := make([]Snapshot, 0, len(names))
	labels := make([]string, 0, len(names))
	var unreadable []string
	for _, n := range names {
		snap, err := readSnapshot(filepath.Join(s.cfg.SuspendDir, n))
		if err != nil {
			// Left where it is, never deleted.
			unreadable = append(unreadable, fmt.Sprintf("%s (%v)", n, err))
			continue
		}
		snaps = append(snaps, snap)
		labels = append(labels, fmt.Sprintf("%s  (%s, %d messages)", snap.Description, snap.Created, len(snap.Messages)))
	}
	if len(unreadable) > 0 {
		s.screen.Notice(fmt.Sprintf("/recall: skipped %d unreadable snapshot(s) in %s: %s",
			len(unreadable), s.cfg.SuspendDir, strings.Join(unreadable, "; ")))
	}
	if len(snaps) == 0 {
		s.screen.Error("/recall: no readable snapshot in " + s.cfg.SuspendDir)
		return
	}
	idx, err := s.prompt.Select(context.Background(), "Recall which conversation?", labels)
	if err != nil || idx < 0 || idx >= len(snaps) {
		s.screen.Notice("recall cancelled")
		return
	}
	restored := RecallMessages(snaps[idx].Messages, s.cfg.SystemPrompt(), s.currentPlanSync())
	id := snaps[idx].Conversation
	if id == "" {
		id = conversation.NewID(now())
	}
	if !s.slot.idle(func() {
		s.hist.reset(restored, id)
		s.tools.reset() // another conversation: it fixes its own tool catalog
		s.trust.forget()
	}) {
		s.screen.Error("/recall: a turn started meanwhile; cancel it first")
		return
	}
	// A snapshot without it (older Fido) knows no file: every overwrite of an
	// existing file then needs a read first, which is the safe side.
	s.files.Replace(snaps[idx].Seen)
	s.screen.Notice(fmt.Sprintf("recalled %q (%d messages); the workspace plan is unchanged", snaps[idx].Description, len(restored)))
}

// readSnapshot reads and validates one snapshot file; the error says in a
// few words what is wrong with it.
func readSnapshot(path string) (Snapshot, error) {
	var snap Snapshot
	b, err := confined.ReadPath(path, maxSnapshotFile)
	if err != nil {
		return snap, err
	}
	if err := json.Unmarshal(b, &snap); err != nil {
		return snap, fmt.Errorf("not a snapshot: %v", err)
	}
	if snap.Version != 1 {
		return snap, fmt.Errorf("unknown snapshot version %d", snap.Version)
	}
	if err := ValidateHistory(snap.Messages); err != nil {
		return snap, err
	}
	return snap, nil
}

// ValidateHistory checks that msgs is a conversation a provider accepts: a
// system message first and nowhere else, known roles, every tool call with
// a unique non-empty id, a name and JSON arguments, answered by exactly one
// tool result right after its assistant message, and no other tool result.
func ValidateHistory(msgs []Message) error {
	if len(msgs) == 0 {
		return errors.New("no messages")
	}
	if msgs[0].Role != RoleSystem {
		return fmt.Errorf("message 1 is %q, not the system message", msgs[0].Role)
	}
	seen := map[string]bool{}
	open := map[string]bool{} // calls of the latest assistant message still unanswered
	for i, m := range msgs {
		n := i + 1
		if m.Role != RoleTool && len(open) > 0 {
			return fmt.Errorf("message %d: %d tool call(s) of the message before have no result", n, len(open))
		}
		switch m.Role {
		case RoleSystem:
			if i > 0 {
				return fmt.Errorf("message %d: a second system message", n)
			}
		case RoleUser:
		case RoleAssistant:
			for _, c := range m.ToolCalls {
				switch {
				case c.ID == "":
					return fmt.Errorf("message %d: a tool call without an id", n)
				case seen[c.ID]:
					return fmt.Errorf("message %d: tool call id %q is used twice", n, c.ID)
				case c.Name == "":
					return fmt.Errorf("message %d: tool call %q has no name", n, c.ID)
				case strings.TrimSpace(c.Arguments) != "" && !json.Valid([]byte(c.Arguments)):
					return fmt.Errorf("message %d: tool call %q has arguments that are not JSON", n, c.ID)
				}
				seen[c.ID], open[c.ID] = true, true
			}
		case RoleTool:
			if !open[m.ToolCallID] {
				return fmt.Errorf("message %d: a tool result for %q, which no tool call before it awaits", n, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		default:
			return fmt.Errorf("message %d: unknown role %q", n, m.Role)
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("the last %d tool call(s) have no result", len(open))
	}
	return nil
}

// RecallMessages rebuilds a recalled conversation under a fresh system
// prompt: the snapshot's plan calls and results are dropped (the plan belongs
// to the workspace, not to the transcript) and the current plan, if any, is
// restored right after the system message.
func RecallMessages(snap []Message, system string, planSync []Message) []Message {
	out := []Message{{Role: RoleSystem, Content: system}}
	out = append(out, planSync...)
	dropped := map[string]bool{}
	for _, m := range snap {
		m = m.Clone()
		switch m.Role {
		case RoleSystem:
			continue
		case RoleAssistant:
			kept := m.ToolCalls[:0]
			for _, c := range m.ToolCalls {
				if c.Name == PlanToolName {
					dropped[c.ID] = true
					continue
				}
				kept = append(kept, c)
			}
			m.ToolCalls = kept
			if len(m.ToolCalls) == 0 {
				m.ToolCalls = nil
				if m.Content == "" {
					continue
				}
			}
		case RoleTool:
			if dropped[m.ToolCallID] {
				continue
			}
		}
		out = append(out, m)
	}
	return out
}
