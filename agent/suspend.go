package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/fido-nvim/fido/tools"
)

// Snapshot is a /suspend file.
type Snapshot struct {
	Version     int       `json:"version"`
	Description string    `json:"description"`
	Created     string    `json:"created"`
	Root        string    `json:"root"`
	Messages    []Message `json:"messages"`
}

var slugRe = regexp.MustCompile(`[^a-z0-9]+`)

func (s *Session) suspend(desc string) {
	if s.cfg.SuspendDir == "" {
		s.ui.Notice("/suspend is not available: no state directory")
		return
	}
	if desc == "" {
		text, ok, err := s.ui.Input(context.Background(), "Describe this snapshot: ", "")
		if err != nil || !ok || strings.TrimSpace(text) == "" {
			s.ui.Notice("suspend cancelled")
			return
		}
		desc = strings.TrimSpace(text)
	}
	msgs := s.Messages()
	snap := Snapshot{Version: 1, Description: desc, Created: now().UTC().Format(time.RFC3339), Root: s.cfg.Root, Messages: msgs}
	slug := strings.Trim(slugRe.ReplaceAllString(strings.ToLower(desc), "-"), "-")
	if len(slug) > 40 {
		slug = slug[:40]
	}
	name := now().UTC().Format("20060102T150405Z") + "-" + slug + ".json"
	path := filepath.Join(s.cfg.SuspendDir, name)
	b, err := json.MarshalIndent(snap, "", " ")
	if err == nil {
		err = tools.WriteFileAtomic(path, b, 0o600)
	}
	if err != nil {
		s.ui.Error("could not save the snapshot: " + err.Error())
		return
	}
	s.ui.Notice(fmt.Sprintf("suspended %d messages as %q (%s)", len(msgs), desc, name))
}

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

func (s *Session) recall() {
	if s.cfg.SuspendDir == "" {
		s.ui.Notice("/recall is not available: no state directory")
		return
	}
	if s.Busy() {
		s.ui.Error("/recall: a turn is running; cancel it first")
		return
	}
	names, err := ListSnapshots(s.cfg.SuspendDir)
	if err != nil {
		s.ui.Error("/recall: " + err.Error())
		return
	}
	if len(names) == 0 {
		s.ui.Notice("no snapshots yet; /suspend saves one")
		return
	}
	snaps := make([]Snapshot, 0, len(names))
	labels := make([]string, 0, len(names))
	var unreadable []string
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(s.cfg.SuspendDir, n))
		var snap Snapshot
		if err == nil {
			err = json.Unmarshal(b, &snap)
		}
		if err != nil || len(snap.Messages) == 0 || snap.Messages[0].Role != RoleSystem {
			unreadable = append(unreadable, n) // left where it is, never deleted
			continue
		}
		snaps = append(snaps, snap)
		labels = append(labels, fmt.Sprintf("%s  (%s, %d messages)", snap.Description, snap.Created, len(snap.Messages)))
	}
	if len(unreadable) > 0 {
		s.ui.Notice(fmt.Sprintf("/recall: skipped %d unreadable snapshot(s) in %s: %s",
			len(unreadable), s.cfg.SuspendDir, strings.Join(unreadable, ", ")))
	}
	if len(snaps) == 0 {
		s.ui.Error("/recall: no readable snapshot in " + s.cfg.SuspendDir)
		return
	}
	idx, err := s.ui.Select(context.Background(), "Recall which conversation?", labels)
	if err != nil || idx < 0 || idx >= len(snaps) {
		s.ui.Notice("recall cancelled")
		return
	}
	restored := RecallMessages(snaps[idx].Messages, s.cfg.SystemPrompt(), s.currentPlanSync())
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		s.ui.Error("/recall: a turn started meanwhile; cancel it first")
		return
	}
	s.messages = restored
	s.pending = nil
	s.reg = nil // another conversation: it fixes its own tool catalog
	s.mu.Unlock()
	s.ui.Notice(fmt.Sprintf("recalled %q (%d messages); the workspace plan is unchanged", snaps[idx].Description, len(restored)))
}

func (s *Session) currentPlanSync() []Message {
	if s.cfg.Plans == nil {
		return nil
	}
	p := s.cfg.Plans.Current()
	if p == nil {
		return nil
	}
	return PlanRestoreMessages(*p)
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
