package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fido-nvim/fido/tools/text"
)

// Bounds of what a server may put into the catalog.
const (
	// MaxNameLen is the longest tool name providers accept.
	MaxNameLen = 64
	// MaxDescriptionRunes bounds a tool's description (server prefix included).
	MaxDescriptionRunes = 1024
)

type catalogEntry struct {
	server *server
	tool   *sdk.Tool
}

// ToolName is mcp__<server>__<tool> reduced to [A-Za-z0-9_-] and cut to 64
// characters (uniqueness is buildCatalog's job).
func ToolName(server, tool string) string {
	name := "mcp__" + sanitize(server) + "__" + sanitize(tool)
	if len(name) > MaxNameLen {
		name = name[:MaxNameLen]
	}
	return name
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// uniqueName makes name unique among taken by replacing its end with _2, _3, ….
func uniqueName(name string, taken map[string]bool) string {
	if !taken[name] {
		return name
	}
	for i := 2; ; i++ {
		suffix := fmt.Sprintf("_%d", i)
		base := name
		if len(base)+len(suffix) > MaxNameLen {
			base = base[:MaxNameLen-len(suffix)]
		}
		if c := base + suffix; !taken[c] {
			return c
		}
	}
}

// buildCatalog adapts the entries into tools sorted by name, leaving out
// (and reporting) tools whose input schema is not a valid JSON Schema object.
func buildCatalog(m *Manager, entries []catalogEntry) ([]*Tool, []string) {
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.server.cfg.Name != b.server.cfg.Name {
			return a.server.cfg.Name < b.server.cfg.Name
		}
		return a.tool.Name < b.tool.Name
	})
	var out []*Tool
	var problems []string
	taken := map[string]bool{}
	for _, e := range entries {
		params, err := schemaBytes(e.tool.InputSchema)
		if err != nil {
			problems = append(problems, fmt.Sprintf("MCP tool %s/%s left out: its input schema is invalid: %s", e.server.cfg.Name, e.tool.Name, err))
			continue
		}
		name := uniqueName(ToolName(e.server.cfg.Name, e.tool.Name), taken)
		taken[name] = true
		out = append(out, &Tool{
			m: m, srv: e.server, remote: e.tool.Name, name: name,
			desc:     describe(e.server.cfg.Name, e.tool),
			params:   params,
			readOnly: e.tool.Annotations != nil && e.tool.Annotations.ReadOnlyHint,
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, problems
}

// schemaBytes validates a tool's input schema and returns its compact bytes
// (object keys sorted, so the same schema is always the same bytes).
func schemaBytes(schema any) (json.RawMessage, error) {
	if schema == nil {
		return nil, fmt.Errorf("missing")
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	// Round-trip through a generic value: sorted keys, stable bytes.
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a JSON object")
	}
	if t, ok := obj["type"]; ok && t != "object" {
		return nil, fmt.Errorf(`type must be "object", not %v`, t)
	}
	if err := checkTypes(obj); err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s", text.Collapse(err.Error()))
	}
	if _, err := s.Resolve(nil); err != nil {
		return nil, fmt.Errorf("%s", text.Collapse(err.Error()))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n")), nil
}

// describe is the model-facing description: the server name first, bounded.
func describe(server string, t *sdk.Tool) string {
	d := strings.TrimSpace(t.Description)
	if d == "" && t.Title != "" {
		d = t.Title
	}
	if d == "" {
		d = "(no description)"
	}
	d = fmt.Sprintf("[MCP server %s] %s", server, d)
	if utf8.RuneCountInString(d) > MaxDescriptionRunes {
		d = string([]rune(d)[:MaxDescriptionRunes-1]) + "…"
	}
	return d
}

var schemaTypes = map[string]bool{"object": true, "array": true, "string": true, "number": true, "integer": true, "boolean": true, "null": true}

// checkTypes rejects unknown "type" names anywhere in the schema (the schema
// library accepts any string there). Values of default, const, enum and
// examples are data, not schemas, and are skipped.
func checkTypes(v any) error {
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			switch k {
			case "default", "const", "enum", "examples":
				continue
			case "type":
				if err := checkTypeValue(sub); err != nil {
					return err
				}
				if _, isSchema := sub.(map[string]any); !isSchema {
					continue
				}
			}
			if err := checkTypes(sub); err != nil {
				return err
			}
		}
	case []any:
		for _, sub := range x {
			if err := checkTypes(sub); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkTypeValue(v any) error {
	switch t := v.(type) {
	case string:
		if !schemaTypes[t] {
			return fmt.Errorf("unknown type %q", t)
		}
	case []any:
		for _, e := range t {
			if err := checkTypeValue(e); err != nil {
				return err
			}
		}
	}
	return nil
}
