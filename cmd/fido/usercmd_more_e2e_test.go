package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type completionItem struct {
	Word string `msgpack:"word"`
	Menu string `msgpack:"menu"`
	Info string `msgpack:"info"`
}

// inputCompletion types text at the start of the empty input, asks for
// omni completion (<C-x><C-o>, as a user does) and returns the menu's items.
func (f *fido) inputCompletion(t *testing.T, text string) []completionItem {
	t.Helper()
	f.Lua(t, nil, `vim.api.nvim_set_current_win(require("fido.layout").input_win())
vim.api.nvim_buf_set_lines(0, 0, -1, false, {})`)
	_, err := f.Input("<Esc>i" + text + "<C-x><C-o>")
	require.NoError(t, err)
	f.WaitFor(t, `vim.fn.pumvisible() == 1 or #vim.fn.complete_info({ "items" }).items > 0`, 5*time.Second,
		`vim.api.nvim_get_mode()`, `vim.api.nvim_get_current_line()`)
	var items []completionItem
	f.Lua(t, &items, `return vim.fn.complete_info({ "items" }).items`)
	_, err = f.Input("<C-e><Esc>")
	require.NoError(t, err)
	return items
}

func writeCommand(t *testing.T, dir, name, text string) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(name))
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
}

// A custom command's front matter (description, argument-hint) shows in
// /help under "your commands" and in the input's completion menu (the hint
// as the item's menu, the description as its info), for the workspace's
// commands, subfolders and the user's own folder; the first file of a name
// wins, and a changed file shows without a restart.
func TestE2ECustomCommandHelpAndCompletion(t *testing.T) {
	f := startFido(t, "")
	var cfgHome string
	f.Lua(t, &cfgHome, `return vim.env.XDG_CONFIG_HOME`)
	require.NotEmpty(t, cfgHome)
	ws := filepath.Join(f.Dir, ".fido", "commands")
	user := filepath.Join(cfgHome, "fido", "commands")
	writeCommand(t, ws, "greet.md", "---\ndescription: Greets someone\nargument-hint: <name>\n---\nSay hello to $1\n")
	writeCommand(t, ws, "git/commit.md", "---\ndescription: Commit the staged change\nargument-hint: [message]\n---\nCommit it: $ARGUMENTS\n")
	writeCommand(t, user, "grab.md", "---\ndescription: \"Grabs a file\"\nargument-hint: '<path>'\n---\nRead $1\n")
	writeCommand(t, user, "greet.md", "---\ndescription: The user's greet, shadowed\nargument-hint: <nobody>\n---\nignored\n")
	writeCommand(t, ws, "gplain.md", "Just a body, no front matter\n")

	require.NoError(t, f.Command("Fido"))
	f.WaitFor(t, `require("fido").status().root ~= nil`, 10*time.Second)

	require.NoError(t, f.Command("Fido /help"))
	f.waitTranscript(t, "your commands (", 5*time.Second)
	lines := f.Lines(t, "fido://transcript")
	text := strings.Join(lines, "\n")
	yours := text[strings.Index(text, "your commands ("):]
	assert.Contains(t, yours, "/greet <name> — Greets someone")
	assert.Contains(t, yours, "/git:commit [message] — Commit the staged change")
	assert.Contains(t, yours, "/grab <path> — Grabs a file", "quotes around front matter values are dropped")
	assert.Contains(t, lines, "  /gplain", "no front matter: the name alone, no dangling dash")
	assert.Contains(t, lines, "  /new — start a new conversation (the current one stays saved)", "a built-in command without arguments: one space")
	assert.NotContains(t, text, "shadowed", "the workspace's /greet wins over the user's")
	assert.NotContains(t, text, "<nobody>")

	items := f.inputCompletion(t, "/g")
	byWord := map[string]completionItem{}
	for _, it := range items {
		byWord[it.Word] = it
	}
	assert.Equal(t, completionItem{Word: "/greet", Menu: "<name>", Info: "Greets someone"}, byWord["/greet"])
	assert.Equal(t, completionItem{Word: "/git:commit", Menu: "[message]", Info: "Commit the staged change"}, byWord["/git:commit"])
	assert.Equal(t, completionItem{Word: "/grab", Menu: "<path>", Info: "Grabs a file"}, byWord["/grab"])
	assert.Equal(t, completionItem{Word: "/gplain"}, byWord["/gplain"], "no front matter: no menu, no info")
	assert.Len(t, byWord, 4, "only the commands that start with /g: %v", items)

	// Edited while Fido runs: /help and completion show the new text.
	writeCommand(t, ws, "greet.md", "---\ndescription: Greets warmly\nargument-hint: <name> [more]\n---\nSay hello to $1\n")
	require.NoError(t, f.Command("Fido /help"))
	f.waitTranscript(t, "/greet <name> [more] — Greets warmly", 5*time.Second)
	items = f.inputCompletion(t, "/gre")
	require.Len(t, items, 1, "%v", items)
	assert.Equal(t, completionItem{Word: "/greet", Menu: "<name> [more]", Info: "Greets warmly"}, items[0])
}
