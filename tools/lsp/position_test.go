package lsp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
)

// The model's position (a character column or a symbol on a 1-based line)
// becomes the LSP position in each encoding, from the file's text.
func TestPlace(t *testing.T) {
	ws := newWS(t, plainEditor{})
	path := filepath.Join(ws.Root, "u.go")
	// "a😀é b" then "x := b_c + b": the emoji is 4 bytes, 2 UTF-16 units, 1 character.
	require.NoError(t, os.WriteFile(path, []byte("a😀é b\r\nx := b_c + b\r\n"), 0o644))
	col := func(n int) *int { return &n }
	for _, c := range []struct {
		line   int
		column *int
		symbol string
		want   tools.LSPPosition
	}{
		{1, col(1), "", tools.LSPPosition{Line: 0}},
		{1, col(3), "", tools.LSPPosition{Line: 0, UTF8: 5, UTF16: 3, UTF32: 2}},     // é, after the emoji
		{1, col(5), "", tools.LSPPosition{Line: 0, UTF8: 8, UTF16: 5, UTF32: 4}},     // b
		{1, col(99), "", tools.LSPPosition{Line: 0, UTF8: 9, UTF16: 6, UTF32: 5}},    // past the end: the end (no \r)
		{1, nil, "b", tools.LSPPosition{Line: 0, UTF8: 8, UTF16: 5, UTF32: 4}},       // the symbol
		{2, nil, "b", tools.LSPPosition{Line: 1, UTF8: 11, UTF16: 11, UTF32: 11}},    // whole words only: not b_c
		{2, nil, "b_c", tools.LSPPosition{Line: 1, UTF8: 5, UTF16: 5, UTF32: 5}},     // underscores belong to words
		{2, nil, "x", tools.LSPPosition{Line: 1, UTF8: 0, UTF16: 0, UTF32: 0}},       // at the start
		{2, col(12), "", tools.LSPPosition{Line: 1, UTF8: 11, UTF16: 11, UTF32: 11}}, // ASCII: all the same
	} {
		got, fail := place(ws, path, c.line, c.column, c.symbol)
		require.Nil(t, fail, "%+v", c)
		assert.Equal(t, c.want, got, "%+v", c)
	}

	_, fail := place(ws, path, 3, col(1), "")
	require.NotNil(t, fail)
	assert.Contains(t, fail.Content, "line 3 is outside the file (it has 2 lines)")
	_, fail = place(ws, path, 2, nil, "c")
	require.NotNil(t, fail)
	assert.Contains(t, fail.Summary, `"c" does not occur as a whole word on line 2: x := b_c + b`)
	_, fail = place(ws, filepath.Join(ws.Root, "missing.go"), 1, col(1), "")
	require.NotNil(t, fail)
	assert.Contains(t, fail.Summary, "cannot read "+filepath.Join(ws.Root, "missing.go")+" (missing, unreadable, not a regular file or too large)")
}

func TestCharColumns(t *testing.T) {
	line := "a😀é b"
	for _, c := range []struct {
		ch   int
		enc  string
		want int
	}{
		{0, "utf-16", 1}, {1, "utf-16", 2}, {3, "utf-16", 3}, {5, "utf-16", 5},
		{2, "utf-16", 3}, // inside the surrogate pair: that character counts
		{2, "utf-32", 3}, {4, "utf-32", 5}, {99, "utf-32", 6},
		{5, "utf-8", 3}, {8, "utf-8", 5}, {99, "utf-8", 6},
	} {
		assert.Equal(t, c.want, charColumn(line, c.ch, c.enc), "%+v", c)
	}
	assert.Equal(t, 1, charColumn("", 4, "utf-16"))
	assert.Equal(t, 4, byteColumn(line, 7), "Neovim's byte column 7 is é's end")
	assert.Equal(t, 6, byteColumn(line, 99))
}

func TestSplitTextAndShorten(t *testing.T) {
	assert.Equal(t, []string{""}, splitText(nil), "an empty file has one line")
	assert.Equal(t, []string{"a", "", "b"}, splitText([]byte("a\r\n\nb")))
	assert.Equal(t, []string{"a"}, splitText([]byte("a\n")))
	assert.Equal(t, "x y", shorten(" \t x y \r\n"))
	x := strings.Repeat("x", 299)
	assert.Equal(t, x+"…", shorten(x+"é and more"), "cut before é, which straddles byte 300")
	assert.Equal(t, x+"y", shorten(x+"y"))
}
