package lsp

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/workspace"
)

// Positions: the LSP counts a line's characters in the server's position
// encoding (UTF-16 code units unless the server chose UTF-8 bytes or UTF-32
// code points); the model counts them as characters (code points); Neovim's
// diagnostics count bytes. The conversions between them need the line's
// text, which is read here, never in Lua.

// place turns the model's position (1-based line; a 1-based column in
// characters, or the first whole-word occurrence of symbol on the line)
// into the LSP position of the workspace file abs, from its text on disk.
// A position outside the file is a failure for the model.
func place(ws *workspace.Workspace, abs string, line int, column *int, symbol string) (tools.LSPPosition, *tools.Result) {
	text, err := ws.Sandbox.ReadFile(abs, MaxLoad)
	if err != nil {
		res := tools.ErrorResult("cannot read %s (missing, unreadable, not a regular file or too large)", abs)
		return tools.LSPPosition{}, &res
	}
	lines := splitText(text)
	if line < 1 || line > len(lines) {
		res := tools.ErrorResult("line %d is outside the file (it has %d lines)", line, len(lines))
		return tools.LSPPosition{}, &res
	}
	l := lines[line-1]
	var b int
	if symbol != "" {
		var ok bool
		if b, ok = findSymbol(l, symbol); !ok {
			res := tools.ErrorResult("%s does not occur as a whole word on line %d: %s", strconv.Quote(symbol), line, shorten(l))
			return tools.LSPPosition{}, &res
		}
	} else {
		b = byteOfChar(l, max(*column-1, 0))
	}
	return positionAt(line-1, l, b), nil
}

// positionAt is the LSP position of byte b of line (0-based row).
func positionAt(row int, line string, b int) tools.LSPPosition {
	b = min(b, len(line))
	p := tools.LSPPosition{Line: row, UTF8: b}
	for _, r := range line[:b] {
		p.UTF32++
		p.UTF16++
		if r >= 0x10000 {
			p.UTF16++ // a surrogate pair
		}
	}
	return p
}

// charColumn is the 1-based character column of LSP character ch (in
// encoding enc) of line. An offset inside a character counts that
// character; one past the end is the end.
func charColumn(line string, ch int, enc string) int {
	if enc == "utf-8" {
		return utf8.RuneCountInString(line[:min(max(ch, 0), len(line))]) + 1
	}
	units, n := 0, 0
	for _, r := range line {
		if units >= ch {
			break
		}
		units++
		if enc == "utf-16" && r >= 0x10000 {
			units++
		}
		n++
	}
	return n + 1
}

// byteColumn is the 1-based character column of the 0-based byte offset b
// of line (Neovim's diagnostics count bytes).
func byteColumn(line string, b int) int {
	return utf8.RuneCountInString(line[:min(max(b, 0), len(line))]) + 1
}

// byteOfChar is the byte offset of the 0-based character index i of line
// (the end of the line when i is past it).
func byteOfChar(line string, i int) int {
	n := 0
	for b := range line {
		if n == i {
			return b
		}
		n++
	}
	return len(line)
}

// findSymbol is the byte offset of the first occurrence of sym in line that
// is a whole word (no letter, digit or underscore on either side).
func findSymbol(line, sym string) (int, bool) {
	if sym == "" {
		return 0, false
	}
	for from := 0; from <= len(line); {
		i := strings.Index(line[from:], sym)
		if i < 0 {
			return 0, false
		}
		s, e := from+i, from+i+len(sym)
		if (s == 0 || !isWordByte(line[s-1])) && (e == len(line) || !isWordByte(line[e])) {
			return s, true
		}
		from = s + 1
	}
	return 0, false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// splitText splits a file's text into lines as Neovim loads it: a final
// newline ends the last line (an empty file has one empty line) and a
// carriage return before a newline is not part of the line.
func splitText(text []byte) []string {
	lines := strings.Split(string(text), "\n")
	if len(lines) > 1 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// maxText bounds the text of a result's line (bytes).
const maxText = 300

// shorten trims a result line and cuts it after maxText bytes (at a
// character boundary).
func shorten(text string) string {
	text = strings.Trim(text, " \t\n\v\f\r")
	if len(text) <= maxText {
		return text
	}
	cut := maxText
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + "…"
}
