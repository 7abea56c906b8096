package nvim

import (
	"time"

	"github.com/fido-nvim/fido/agent"
)

// showEditTimeout bounds how long a preview waits for a busy Neovim: the
// picker that follows still asks, so a late preview loses nothing.
const showEditTimeout = 2 * time.Second

// ShowEdit implements agent.EditorSurface: the proposed change as a unified diff in a
// float (filetype diff) while the review picker asks; an empty diff closes
// it. It waits (bounded) until Neovim has scheduled it, so the preview is up
// before the picker opens; the RPC loop never waits.
func (u *UI) ShowEdit(title, diff string) {
	if u.prompts == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if diff == "" {
			_ = u.prompts.exec(`require("fido.review").close_preview()`)
			return
		}
		_ = u.prompts.exec(`require("fido.review").preview(...)`, title, diff)
	}()
	select {
	case <-done:
	case <-time.After(showEditTimeout):
	}
}

// reviewFileView, reviewItemView and reviewViewMsg are agent.ReviewView as
// Lua reads it (require("fido.review").open).
type reviewFileView struct {
	Path         string   `msgpack:"path"`
	Abs          string   `msgpack:"abs"`
	Before       []string `msgpack:"before"`
	BeforeExists bool     `msgpack:"before_exists"`
	Exists       bool     `msgpack:"exists"`
}

type reviewItemView struct {
	Path string `msgpack:"path"`
	Abs  string `msgpack:"filename"`
	Line int    `msgpack:"lnum"`
	Text string `msgpack:"text"`
	// Type is the quickfix type: "W" for a hunk edited since, else "".
	Type string `msgpack:"type"`
}

type reviewViewMsg struct {
	Title   string           `msgpack:"title"`
	Files   []reviewFileView `msgpack:"files"`
	Items   []reviewItemView `msgpack:"items"`
	Notes   []string         `msgpack:"notes"`
	Refresh bool             `msgpack:"refresh"`
}

// OpenReview implements agent.EditorSurface: the review tab (quickfix list of hunks,
// each file beside its before-state in diff mode).
func (u *UI) OpenReview(v agent.ReviewView) {
	if u.prompts == nil {
		return
	}
	// Every list is sent as a list, never nil (vim.NIL in Lua).
	msg := reviewViewMsg{Title: v.Title, Notes: append([]string{}, v.Notes...), Refresh: v.Refresh, Files: []reviewFileView{}, Items: []reviewItemView{}}
	for _, f := range v.Files {
		before := f.Before
		if before == nil {
			before = []string{}
		}
		msg.Files = append(msg.Files, reviewFileView{Path: f.Path, Abs: f.Abs, Before: before, BeforeExists: f.BeforeExists, Exists: f.Exists})
	}
	for _, it := range v.Items {
		item := reviewItemView{Path: it.Path, Abs: it.Abs, Line: it.Line, Text: it.Text}
		if it.Edited {
			item.Type = "W"
		}
		msg.Items = append(msg.Items, item)
	}
	go func() { _ = u.prompts.exec(`require("fido.review").open(...)`, msg) }()
}

// reviewRequest is a :FidoReview / :FidoRevert notification's argument.
type reviewRequest struct {
	Action   string `msgpack:"action"`
	All      bool   `msgpack:"all"`
	Path     string `msgpack:"path"`
	Line     int    `msgpack:"line"`
	InBefore bool   `msgpack:"in_before"`
	Whole    bool   `msgpack:"whole"`
	Reason   string `msgpack:"reason"`
}

func (r reviewRequest) agent() agent.ReviewRequest {
	return agent.ReviewRequest{Action: r.Action, All: r.All, Path: r.Path, Line: r.Line, InBefore: r.InBefore, Whole: r.Whole, Reason: r.Reason}
}
