package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/confined"
	"github.com/fido-nvim/fido/tools/workspace"
)

// The editor passes the language servers' answers up as they came
// (tools.LSPReply); this file reads them into what the tools show: file
// locations with their line's text, hover text, symbols with their kind,
// diagnostics with character columns.

// answer is a reply read for the tools.
type answer struct {
	Server      string
	Locations   []location
	Hover       string
	Symbols     []symbol
	Diagnostics []diagnostic
	// Total counts the locations or symbols (the tools show a limited number).
	Total int
}

// location is a place in a file (1-based line, 1-based column in
// characters) with the text of its line.
type location struct {
	Path string
	Line int
	Col  int
	Text string
}

// symbol is one workspace symbol.
type symbol struct {
	Name      string
	Kind      string
	Container string
	Location  location
}

// diagnostic is one diagnostic of a file: 1-based line, 1-based column in
// characters, severity "error", "warning", "info" or "hint".
type diagnostic struct {
	Path     string
	Line     int
	Col      int
	Severity string
	Message  string
	Source   string
}

// servers returns the editor's language servers, or the error result.
func servers(ws *workspace.Workspace) (tools.LanguageServers, *tools.Result) {
	if ls, ok := ws.Editor.(tools.LanguageServers); ok {
		return ls, nil
	}
	res := tools.ErrorResult("no editor with language servers is connected (Fido uses Neovim's LSP client)")
	return nil, &res
}

// ask runs q and reads the reply; failures become results: a nil result
// means ans is good.
func ask(ctx context.Context, ws *workspace.Workspace, ls tools.LanguageServers, q tools.LSPQuery) (answer, *tools.Result, error) {
	reply, err := ls.LSPQuery(ctx, q)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			return answer{}, nil, err
		}
		res := tools.ErrorResult("%v", err)
		return answer{}, &res, nil
	}
	if reply.Error != "" {
		res := tools.ErrorResult("%s", reply.Error)
		return answer{}, &res, nil
	}
	var ans answer
	var msg string
	switch q.Method {
	case tools.LSPHover:
		ans, msg = readHover(reply)
	case tools.LSPDefinition, tools.LSPReferences:
		ans, msg = readLocations(ws, reply)
	case tools.LSPSymbols:
		ans, msg = readSymbols(ws, reply)
	case tools.LSPDiagnostics:
		ans = answer{Server: reply.Server, Diagnostics: readDiagnostics(ws, reply.Files)}
	}
	if msg != "" {
		res := tools.ErrorResult("%s", msg)
		return ans, &res, nil
	}
	return ans, nil, nil
}

// silence is the failure when no server answered in time ("" otherwise).
func silence(reply tools.LSPReply) string {
	if reply.TimedOut && len(reply.Results) == 0 {
		return fmt.Sprintf("%s did not answer within %d ms", reply.Server, reply.TimeoutMS)
	}
	return ""
}

// readHover joins the servers' hover texts.
func readHover(reply tools.LSPReply) (answer, string) {
	var parts []string
	for _, r := range reply.Results {
		var h struct {
			Contents any `json:"contents"`
		}
		if json.Unmarshal(r.Result, &h) != nil || h.Contents == nil {
			continue
		}
		if t := hoverText(h.Contents); t != "" {
			parts = append(parts, t)
		}
	}
	ans := answer{Server: reply.Server, Hover: strings.Join(parts, "\n\n")}
	if msg := silence(reply); msg != "" {
		return ans, msg
	}
	if len(reply.Results) > 0 && ans.Hover == "" {
		return ans, serverErrors(reply.Results)
	}
	return ans, ""
}

// hoverText is the text of Hover.contents: a MarkedString (a string, or a
// { language, value } code block), a list of them, or MarkupContent.
func hoverText(contents any) string {
	switch c := contents.(type) {
	case string:
		return c
	case map[string]any:
		v, ok := c["value"]
		if !ok || v == nil {
			return ""
		}
		if lang, ok := c["language"]; ok && lang != nil {
			return "```" + stringOf(lang) + "\n" + stringOf(v) + "\n```"
		}
		return stringOf(v)
	case []any:
		parts := make([]string, len(c))
		for i, e := range c {
			parts[i] = hoverText(e)
		}
		return strings.Join(parts, "\n\n")
	}
	return ""
}

func stringOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// lspRange is the start of an LSP Range (numbers as JSON has them).
type lspRange struct {
	Start struct {
		Line      float64 `json:"line"`
		Character float64 `json:"character"`
	} `json:"start"`
}

// spot is a raw place: a path, a 0-based row and an LSP character.
type spot struct {
	path     string
	row      int
	char     int
	encoding string
}

// readLocations reads Location, Location[] and LocationLink[] answers,
// each place once.
func readLocations(ws *workspace.Workspace, reply tools.LSPReply) (answer, string) {
	var spots []spot
	for _, r := range reply.Results {
		for _, raw := range objects(r.Result) {
			var l struct {
				URI                  string    `json:"uri"`
				Range                *lspRange `json:"range"`
				TargetURI            string    `json:"targetUri"`
				TargetRange          *lspRange `json:"targetRange"`
				TargetSelectionRange *lspRange `json:"targetSelectionRange"`
			}
			if json.Unmarshal(raw, &l) != nil {
				continue
			}
			uri, rng := l.URI, l.Range
			if l.TargetURI != "" {
				uri, rng = l.TargetURI, l.TargetSelectionRange
				if rng == nil {
					rng = l.TargetRange
				}
			}
			if s, ok := spotOf(uri, rng, r.Encoding); ok {
				spots = append(spots, s)
			}
		}
	}
	lines := readLines(ws, spots)
	ans := answer{Server: reply.Server}
	seen := map[string]bool{}
	for _, s := range spots {
		l := locationAt(s, lines)
		key := fmt.Sprintf("%s:%d:%d", l.Path, l.Line, l.Col)
		if !seen[key] {
			seen[key] = true
			ans.Locations = append(ans.Locations, l)
		}
	}
	ans.Total = len(ans.Locations)
	if msg := silence(reply); msg != "" {
		return ans, msg
	}
	if len(reply.Results) > 0 && ans.Total == 0 {
		return ans, serverErrors(reply.Results)
	}
	return ans, ""
}

// objects is a JSON value as a list of objects: the elements of an array,
// or the one object.
func objects(raw json.RawMessage) []json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '{' {
		return []json.RawMessage{raw}
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	return list
}

func spotOf(uri string, r *lspRange, encoding string) (spot, bool) {
	path, ok := uriPath(uri)
	if !ok {
		return spot{}, false
	}
	s := spot{path: path, encoding: encoding}
	if r != nil {
		s.row, s.char = int(r.Start.Line), int(r.Start.Character)
	}
	return s, true
}

func locationAt(s spot, lines map[spot]string) location {
	line := lines[spot{path: s.path, row: s.row}]
	return location{Path: s.path, Line: s.row + 1, Col: charColumn(line, s.char, s.encoding), Text: shorten(line)}
}

// kinds names the LSP SymbolKind values (1-based).
var kinds = []string{"File", "Module", "Namespace", "Package", "Class", "Method", "Property", "Field",
	"Constructor", "Enum", "Interface", "Function", "Variable", "Constant", "String", "Number", "Boolean",
	"Array", "Object", "Key", "Null", "EnumMember", "Struct", "Event", "Operator", "TypeParameter"}

func kindName(k *float64) string {
	switch {
	case k == nil:
		return ""
	case *k >= 1 && int(*k) <= len(kinds) && *k == float64(int(*k)):
		return kinds[int(*k)-1]
	}
	return strconv.FormatFloat(*k, 'f', -1, 64)
}

// readSymbols reads SymbolInformation[] and WorkspaceSymbol[] answers, each
// symbol once per file and line.
func readSymbols(ws *workspace.Workspace, reply tools.LSPReply) (answer, string) {
	type found struct {
		name, kind, container string
		at                    spot
	}
	var all []found
	var spots []spot
	for _, r := range reply.Results {
		for _, raw := range objects(r.Result) {
			var s struct {
				Name          string   `json:"name"`
				Kind          *float64 `json:"kind"`
				ContainerName string   `json:"containerName"`
				Location      struct {
					URI   string    `json:"uri"`
					Range *lspRange `json:"range"`
				} `json:"location"`
			}
			if json.Unmarshal(raw, &s) != nil || s.Location.URI == "" {
				continue
			}
			if at, ok := spotOf(s.Location.URI, s.Location.Range, r.Encoding); ok {
				all = append(all, found{s.Name, kindName(s.Kind), s.ContainerName, at})
				spots = append(spots, at)
			}
		}
	}
	lines := readLines(ws, spots)
	ans := answer{Server: reply.Server}
	seen := map[string]bool{}
	for _, f := range all {
		l := locationAt(f.at, lines)
		key := fmt.Sprintf("%s\x00%s\x00%d", f.name, l.Path, l.Line)
		if !seen[key] {
			seen[key] = true
			ans.Symbols = append(ans.Symbols, symbol{Name: f.name, Kind: f.kind, Container: f.container, Location: l})
		}
	}
	ans.Total = len(ans.Symbols)
	if msg := silence(reply); msg != "" {
		return ans, msg
	}
	if ans.Total == 0 {
		return ans, serverErrors(reply.Results)
	}
	return ans, ""
}

// severities names Neovim's diagnostic severities (1-based).
var severities = []string{"error", "warning", "info", "hint"}

// readDiagnostics gives each file's diagnostics character columns (from the
// file's text) and severity names, sorted by line and column.
func readDiagnostics(ws *workspace.Workspace, files []tools.FileDiagnostics) []diagnostic {
	var spots []spot
	for _, f := range files {
		for _, d := range f.Diagnostics {
			spots = append(spots, spot{path: f.Path, row: d.Line})
		}
	}
	lines := readLines(ws, spots)
	var out []diagnostic
	for _, f := range files {
		out = append(out, diagnosticsOf(f.Path, f.Diagnostics, func(row int) (string, bool) {
			l, ok := lines[spot{path: f.Path, row: row}]
			return l, ok
		})...)
	}
	return out
}

// diagnosticsOf reads one file's diagnostics; line gives the text of a row
// (false when unknown: the byte column is then taken as the character
// column).
func diagnosticsOf(path string, ds []tools.Diagnostic, line func(row int) (string, bool)) []diagnostic {
	out := make([]diagnostic, 0, len(ds))
	for _, d := range ds {
		col := d.Col + 1
		if l, ok := line(d.Line); ok {
			col = byteColumn(l, d.Col)
		}
		sev := "error"
		if d.Severity >= 1 && d.Severity <= len(severities) {
			sev = severities[d.Severity-1]
		}
		out = append(out, diagnostic{Path: path, Line: d.Line + 1, Col: col, Severity: sev, Message: d.Message, Source: d.Source})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Col < out[j].Col
	})
	return out
}

// textLines is diagnosticsOf's line function over a file's text (nil:
// unknown).
func textLines(text []byte) func(int) (string, bool) {
	if text == nil {
		return func(int) (string, bool) { return "", false }
	}
	lines := splitText(text)
	return func(row int) (string, bool) {
		if row < 0 || row >= len(lines) {
			return "", true
		}
		return lines[row], true
	}
}

// serverErrors joins the servers' errors ("server: message; …").
func serverErrors(results []tools.LSPResult) string {
	var errs []string
	for _, r := range results {
		raw := bytes.TrimSpace(r.Error)
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		var v any
		_ = json.Unmarshal(raw, &v)
		msg := string(raw)
		switch e := v.(type) {
		case string:
			msg = e
		case map[string]any:
			if m, ok := e["message"]; ok && m != nil {
				msg = stringOf(m)
			}
		}
		errs = append(errs, r.Server+": "+msg)
	}
	return strings.Join(errs, "; ")
}

// uriPath is the file path of a file:// URI (percent-decoded, without a
// fragment); another scheme's URI is its own path; a string without a
// scheme is no place.
func uriPath(uri string) (string, bool) {
	colon := strings.IndexByte(uri, ':')
	if colon < 1 || !isLetter(uri[0]) {
		return "", false
	}
	for i := 1; i < colon; i++ {
		if c := uri[i]; !isLetter(c) && !(c >= '0' && c <= '9') && c != '.' && c != '+' && c != '-' {
			return "", false
		}
	}
	if uri[:colon] != "file" {
		return uri, true
	}
	if i := strings.IndexByte(uri, '#'); i >= 0 {
		uri = uri[:i]
	}
	return strings.TrimPrefix(percentDecode(uri), "file://"), true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// percentDecode decodes every %XX; anything else stays as it is.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// readLines reads the rows the spots name, each file once and one at a
// time: a workspace file through the workspace sandbox, any other (the
// standard library, a module cache) through confined.ReadPath; either way
// only a regular file of at most MaxLoad bytes, never blocking on a FIFO or
// reading a device. A row past the end is empty; the rows of a file that
// cannot be read are missing.
func readLines(ws *workspace.Workspace, spots []spot) map[spot]string {
	rows := map[string][]int{}
	for _, s := range spots {
		rows[s.path] = append(rows[s.path], s.row)
	}
	out := map[spot]string{}
	for path, want := range rows {
		text := fileText(ws, path)
		if text == nil {
			continue
		}
		lines := splitText(text)
		for _, r := range want {
			l := ""
			if r >= 0 && r < len(lines) {
				l = lines[r]
			}
			out[spot{path: path, row: r}] = l
		}
	}
	return out
}

// fileText is the content of path (nil when it cannot be read).
func fileText(ws *workspace.Workspace, path string) []byte {
	var b []byte
	var err error
	if ws.Sandbox.Contains(path) {
		b, err = ws.Sandbox.ReadFile(path, MaxLoad)
	} else {
		b, err = confined.ReadPath(path, MaxLoad)
	}
	if err != nil {
		return nil
	}
	if b == nil {
		b = []byte{}
	}
	return b
}
