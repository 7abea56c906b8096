package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// End-to-end tests of what review, revert and rewind promise about the
// user's own edits: the review lists only the hunks Fido wrote, and no
// revert or rewind changes a byte Fido did not write.

// patchR has one turn change lines 10 and 30 of a 40-line r.txt and create
// new.txt.
func (f *fido) patchR(t *testing.T) {
	t.Helper()
	require.NoError(t, writeWorkspaceFile(f.Dir, "r.txt", numberedLines(40)))
	f.turn(t, "edit r", "p1", "patch", `{"operations":[`+
		`{"path":"r.txt","search":"line 10\n","replace":"LINE 10\n"},`+
		`{"path":"r.txt","search":"line 30\n","replace":"LINE 30\n"},`+
		`{"path":"new.txt","content":"new\n"}]}`)
}

// userEdit replaces the line from of rel by to, the way the user would:
// "outside" (another program writes the file) or ":w" (edited and saved in
// Neovim, in the current window).
func (f *fido) userEdit(t *testing.T, how, rel, from, to string) {
	t.Helper()
	path := filepath.Join(f.Dir, rel)
	switch how {
	case "outside":
		data := f.disk(t, rel)
		require.Contains(t, data, from+"\n")
		require.NoError(t, os.WriteFile(path, []byte(strings.Replace(data, from+"\n", to+"\n", 1)), 0o644))
	case ":w":
		f.Lua(t, nil, `local path, from, to = ...
vim.cmd("edit " .. vim.fn.fnameescape(path))
for i, l in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
  if l == from then vim.fn.setline(i, to) break end
end
vim.cmd("silent write")`, path, from, to)
		require.True(t, f.Bool(t, `not vim.bo.modified`))
		require.Contains(t, f.disk(t, rel), to+"\n")
	default:
		t.Fatalf("unknown edit %q", how)
	}
}

// openReview runs :FidoReview and waits for its tab.
func (f *fido) openReview(t *testing.T) []string {
	t.Helper()
	f.Lua(t, nil, `_G.old_tab = require("fido.review").tab()`)
	require.NoError(t, f.Command("FidoReview"))
	f.WaitFor(t, `require("fido.review").tab() ~= nil and require("fido.review").tab() ~= _G.old_tab`, 5*time.Second,
		`vim.fn.getqflist()`, `_G.fido_notes`)
	_, entries := f.reviewEntries(t)
	return entries
}

// revert runs a :FidoRevert command in the current window and waits for its
// outcome: a refusal (the new FidoRevert notification, returned) or the
// refreshed quickfix list ("").
func (f *fido) revert(t *testing.T, cmd string) string {
	t.Helper()
	var before struct {
		Notes int `msgpack:"notes"`
		Tick  int `msgpack:"tick"`
	}
	f.Lua(t, &before, `return { notes = #_G.fido_notes, tick = vim.fn.getqflist({ changedtick = 0 }).changedtick }`)
	require.NoError(t, f.Command(cmd))
	f.WaitFor(t, fmt.Sprintf(`#_G.fido_notes > %d or vim.fn.getqflist({ changedtick = 0 }).changedtick ~= %d`, before.Notes, before.Tick),
		5*time.Second, `_G.fido_notes`, `vim.fn.getqflist()`)
	var note string
	f.Lua(t, &note, `local n = _G.fido_notes[... + 1]; return n and n.msg or ""`, before.Notes)
	return note
}

// atLine puts the cursor of the review's file window on r.txt's line n.
func (f *fido) atLine(t *testing.T, rel string, n int) {
	t.Helper()
	f.Lua(t, nil, `local rel, n = ...
for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  if vim.fn.fnamemodify(vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)), ":t") == rel then
    vim.api.nvim_set_current_win(w)
  end
end
if vim.fn.expand("%:t") ~= rel then vim.cmd("edit " .. vim.fn.fnameescape(rel)) end
vim.api.nvim_win_set_cursor(0, { n, 0 })`, rel, n)
	require.True(t, f.Bool(t, `vim.fn.expand("%:t") == ... and vim.fn.line(".") == select(2, ...)`, rel, n))
}

// noLuaError fails when Neovim reported an error from the plugin.
func (f *fido) noLuaError(t *testing.T) {
	t.Helper()
	msgs := f.Messages(t)
	assert.NotContains(t, msgs, "Error", "no Lua error: %s", msgs)
	assert.NotContains(t, msgs, "review.lua", "no Lua error: %s", msgs)
}

// A turn patches r.txt at lines 10 and 30 and creates new.txt; the user then
// changes line 20 (saved from outside, or with :w in Neovim). :FidoReview
// lists exactly Fido's three hunks; :FidoRevert on the user's line refuses;
// reverting the hunk at line 10, then the whole file with :FidoRevert!,
// puts Fido's lines back and keeps the user's line 20 byte for byte.
func TestE2EReviewKeepsUserEditBetweenHunks(t *testing.T) {
	for _, how := range []string{"outside", ":w"} {
		t.Run(how, func(t *testing.T) {
			f := startFido(t, "")
			f.patchR(t)
			f.userEdit(t, how, "r.txt", "line 20", "user line twenty")
			withUser := strings.Replace(numberedLines(40), "line 20\n", "user line twenty\n", 1)
			fido := strings.Replace(strings.Replace(withUser, "line 10\n", "LINE 10\n", 1), "line 30\n", "LINE 30\n", 1)
			require.Equal(t, fido, f.disk(t, "r.txt"))

			entries := f.openReview(t)
			assert.Equal(t, []string{"new.txt:1: +1 -0 (new file)", "r.txt:10: +1 -1", "r.txt:30: +1 -1"}, entries,
				"exactly the hunks Fido wrote")
			f.noLuaError(t)
			assert.True(t, f.Bool(t, `vim.fn.getbufline(vim.fn.bufnr("fido://review/r.txt"), 20)[1] == "user line twenty"
				and vim.fn.getbufline(vim.fn.bufnr("fido://review/r.txt"), 10)[1] == "line 10"`),
				"the before-state beside the file is the file without Fido's changes, the user's line included")

			// On the user's line: nothing of Fido's to revert there.
			f.atLine(t, "r.txt", 20)
			note := f.revert(t, "FidoRevert")
			assert.Contains(t, note, "FidoRevert: no change of Fido's at r.txt line 20")
			assert.Equal(t, fido, f.disk(t, "r.txt"), "the user's line is not reverted")

			// Fido's hunk at line 10: reverted, the rest kept.
			f.atLine(t, "r.txt", 10)
			assert.Empty(t, f.revert(t, "FidoRevert"))
			assert.Equal(t, strings.Replace(withUser, "line 30\n", "LINE 30\n", 1), f.disk(t, "r.txt"))
			_, entries = f.reviewEntries(t)
			assert.Equal(t, []string{"new.txt:1: +1 -0 (new file)", "r.txt:30: +1 -1"}, entries)

			// The whole file: Fido's remaining line goes, the user's stays.
			f.atLine(t, "r.txt", 1)
			assert.Empty(t, f.revert(t, "FidoRevert!"))
			assert.Equal(t, withUser, f.disk(t, "r.txt"))
			_, entries = f.reviewEntries(t)
			assert.Equal(t, []string{"new.txt:1: +1 -0 (new file)"}, entries)
			f.WaitFor(t, `vim.fn.getbufline(vim.fn.bufnr("r.txt"), 20)[1] == "user line twenty"
				and vim.fn.getbufline(vim.fn.bufnr("r.txt"), 30)[1] == "line 30"`, 5*time.Second,
				`vim.fn.getbufline(vim.fn.bufnr("r.txt"), 1, "$")`)
			f.noLuaError(t)
		})
	}
}

// The user edits a line inside one of Fido's hunks: the review shows that
// hunk as edited since; :FidoRevert on it and :FidoRevert! on the file
// refuse, naming the file and the lines, and change nothing; Fido's other
// hunk still reverts, the user's edit kept.
func TestE2EReviewRefusesHunkEditedByUser(t *testing.T) {
	f := startFido(t, "")
	f.patchR(t)
	f.userEdit(t, "outside", "r.txt", "LINE 10", "LINE 10, and the user's words")
	edited := strings.Replace(strings.Replace(numberedLines(40), "line 10\n", "LINE 10, and the user's words\n", 1), "line 30\n", "LINE 30\n", 1)

	entries := f.openReview(t)
	assert.Equal(t, []string{"new.txt:1: +1 -0 (new file)", "r.txt:10: +1 -1 (edited since Fido's change)", "r.txt:30: +1 -1"}, entries)
	assert.True(t, f.Bool(t, `vim.fn.getqflist()[2].type == "W"`), "an edited hunk is a warning in the list")
	f.noLuaError(t)

	f.atLine(t, "r.txt", 10)
	note := f.revert(t, "FidoRevert")
	assert.Contains(t, note, "r.txt line 10 was edited after Fido's change")
	assert.Contains(t, note, "nothing was changed")
	assert.Equal(t, edited, f.disk(t, "r.txt"))

	note = f.revert(t, "FidoRevert!")
	assert.Contains(t, note, "r.txt: line 10 was edited after Fido's change; nothing was changed")
	assert.Equal(t, edited, f.disk(t, "r.txt"))

	f.atLine(t, "r.txt", 30)
	assert.Empty(t, f.revert(t, "FidoRevert"))
	assert.Equal(t, strings.Replace(numberedLines(40), "line 10\n", "LINE 10, and the user's words\n", 1), f.disk(t, "r.txt"))
	_, entries = f.reviewEntries(t)
	assert.Equal(t, []string{"new.txt:1: +1 -0 (new file)", "r.txt:10: +1 -1 (edited since Fido's change)"}, entries)
	f.noLuaError(t)
}

// /rewind over a file the user changed between Fido's hunks (with :w) puts
// Fido's lines back and keeps the user's line; a file where the user edited
// one of Fido's lines is kept as it is and the transcript says which lines.
func TestE2ERewindKeepsUserEditBetweenHunks(t *testing.T) {
	f := startFido(t, "")
	require.NoError(t, writeWorkspaceFile(f.Dir, "o.txt", "o1\no2\no3\n"))
	f.turn(t, "look first", "r1", "read_file", `{"path":"o.txt"}`)
	f.patchR(t)
	f.turn(t, "edit o", "p2", "patch", `{"operations":[{"path":"o.txt","search":"o2\n","replace":"O2\n"}]}`)
	f.userEdit(t, ":w", "r.txt", "line 20", "user line twenty")
	f.userEdit(t, "outside", "o.txt", "O2", "O2 and the user")

	f.Lua(t, nil, rewindUI)
	f.Lua(t, nil, `_G.pick, _G.mode = "edit r", "Files only"`)
	require.NoError(t, f.Command("Fido /rewind"))
	f.waitTranscript(t, "the conversation is unchanged", 5*time.Second, `_G.asked`)
	withUser := strings.Replace(numberedLines(40), "line 20\n", "user line twenty\n", 1)
	assert.Equal(t, withUser, f.disk(t, "r.txt"), "Fido's lines are back, the user's line is kept")
	assert.NoFileExists(t, filepath.Join(f.Dir, "new.txt"))
	assert.Equal(t, "o1\nO2 and the user\no3\n", f.disk(t, "o.txt"), "a file whose Fido line the user edited is kept")
	text := f.transcript(t)
	assert.Contains(t, text, "restored r.txt")
	assert.Contains(t, text, "o.txt: line 2 was edited after Fido's change")
	f.WaitFor(t, `vim.fn.getbufline(vim.fn.bufnr("r.txt"), 10)[1] == "line 10" and not vim.bo[vim.fn.bufnr("r.txt")].modified`,
		5*time.Second, `vim.fn.getbufline(vim.fn.bufnr("r.txt"), 1, "$")`)
	f.noLuaError(t)
}
