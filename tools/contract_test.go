package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type sampleItem struct {
	Name  string   `json:"name" jsonschema:"Item name, at most {{.MaxName}} characters."`
	State string   `json:"state"`
	Tags  []string `json:"tags,omitempty"`
}

type sampleParams struct {
	Path  string          `json:"path" jsonschema:"File relative to the workspace root."`
	Limit *int            `json:"limit,omitempty" jsonschema:"Most lines. Default {{.DefaultLimit}}."`
	Deep  bool            `json:"deep,omitempty"`
	Items []sampleItem    `json:"items,omitempty"`
	Raw   json.RawMessage `json:"raw,omitempty" jsonschema:"One URL or several."`
}

const sampleTemplate = "Sample.\n\n- `path`: a file.\n- `limit` (default {{.DefaultLimit}}, at most {{.MaxLimit}}): lines; up to {{size .MaxBytes}} within {{dur .Grace}}.\n- `items`: at most {{.MaxItems}}, each `state` one of open or shut.\n"

var sampleVars = Vars{"DefaultLimit": 50, "MaxLimit": 500, "MaxBytes": 256 << 10, "Grace": 300 * time.Millisecond, "MaxName": 40, "MaxItems": 8}

func sampleBounds() []Bound {
	return []Bound{Minimum("limit", 1), Maximum("limit", 500), MaxItems("items", 8), Enum("items.state", "open", "shut"),
		MaxLength("items.name", 40), ArrayOf("raw", "string")}
}

// The schema comes out of the struct and the bounds: properties in field
// order, required = fields without omitempty, no null for pointers and
// slices, nested structs closed too, templates rendered with the vars.
func TestContractSchemaFromStruct(t *testing.T) {
	c := NewContract[sampleParams](sampleTemplate, sampleVars, sampleBounds()...)
	want := `{"type":"object","properties":{` +
		`"path":{"type":"string","description":"File relative to the workspace root."},` +
		`"limit":{"type":"integer","description":"Most lines. Default 50.","minimum":1,"maximum":500},` +
		`"deep":{"type":"boolean"},` +
		`"items":{"type":"array","items":{"type":"object","properties":{` +
		`"name":{"type":"string","description":"Item name, at most 40 characters.","maxLength":40},` +
		`"state":{"type":"string","enum":["open","shut"]},` +
		`"tags":{"type":"array","items":{"type":"string"}}},` +
		`"required":["name","state"],"additionalProperties":false},"maxItems":8},` +
		`"raw":{"type":"array","items":{"type":"string"},"description":"One URL or several."}},` +
		`"required":["path"],"additionalProperties":false}`
	assert.Equal(t, want, string(c.Parameters()))
	assert.Equal(t, "Sample.\n\n- `path`: a file.\n- `limit` (default 50, at most 500): lines; up to 256 KiB within 300 ms.\n- `items`: at most 8, each `state` one of open or shut.\n", c.Description())
	for range 20 {
		again := NewContract[sampleParams](sampleTemplate, sampleVars, sampleBounds()...)
		require.Equal(t, string(c.Parameters()), string(again.Parameters()), "the same bytes every time")
	}
}

// Inputs that do not fit together are an error of the contract, and a
// registry refuses a tool whose contract has one.
func TestNewContractReportsWhatDoesNotFit(t *testing.T) {
	tests := []struct {
		name, template, want string
		bounds               []Bound
	}{
		{"bound on a missing property", "x", `no property "lines"`, []Bound{Maximum("lines", 3)}},
		{"nested path", "x", `no property "items.title"`, []Bound{MaxLength("items.title", 3)}},
		{"maximum on a string", "x", "maximum needs a number, the property is string", []Bound{Maximum("path", 3)}},
		{"maxItems on an integer", "x", "maxItems needs a array, the property is integer", []Bound{MaxItems("limit", 3)}},
		{"enum on a boolean", "x", "enum needs a string", []Bound{Enum("deep", "a")}},
		{"ArrayOf on a typed field", "x", "ArrayOf is for json.RawMessage fields", []Bound{ArrayOf("items", "string")}},
		{"missing var", "at most {{.Nope}}", `map has no entry for key "Nope"`, nil},
		{"bad template", "at most {{.MaxLimit", "unclosed action", nil},
		{"size of a non-integer", "{{size .Grace}}", "wrong type", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewContract[sampleParams](tt.template, sampleVars, tt.bounds...)
			err := c.Err()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "contract of tools.sampleParams")
			assert.Nil(t, c.Parameters())
			assert.Empty(t, c.Description())
			_, err = NewRegistry(contractTool{contract: c})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "tools: sample: contract of tools.sampleParams")
			assert.Contains(t, CheckContract(contractTool{contract: c}).Error(), tt.want)
		})
	}
}

// contractTool is a tool whose contract parts a test can vary.
// plainTool is a tool without a contract.
type plainTool struct{ name string }

func (n plainTool) Name() string                { return n.name }
func (n plainTool) Description() string         { return "d " + n.name }
func (n plainTool) Parameters() json.RawMessage { return json.RawMessage(`{"type": "object"}`) }
func (n plainTool) Access() Access              { return ReadOnly }
func (n plainTool) Run(context.Context, Invocation, json.RawMessage) (Result, error) {
	return Result{}, nil
}

type contractTool struct {
	contract *Contract
	params   json.RawMessage // nil: the contract's
	desc     *string         // nil: the contract's
}

func (t contractTool) Name() string { return "sample" }
func (t contractTool) Description() string {
	if t.desc != nil {
		return *t.desc
	}
	return t.contract.Description()
}
func (t contractTool) Parameters() json.RawMessage {
	if t.params != nil {
		return t.params
	}
	return t.contract.Parameters()
}
func (t contractTool) Access() Access      { return ReadOnly }
func (t contractTool) Contract() *Contract { return t.contract }
func (t contractTool) Run(context.Context, Invocation, json.RawMessage) (Result, error) {
	return Result{}, nil
}

// CheckContract passes a consistent tool and names each disagreement.
func TestCheckContract(t *testing.T) {
	good := NewContract[sampleParams](sampleTemplate, sampleVars, sampleBounds()...)
	require.NoError(t, CheckContract(contractTool{contract: good}))
	other := "hand-written"
	vars := func(k string, v any) Vars {
		out := Vars{}
		for key, val := range sampleVars {
			out[key] = val
		}
		out[k] = v
		return out
	}
	tests := []struct {
		name string
		tool Tool
		want string
	}{
		{"no contract", plainTool{"plain"}, "plain: no Contract"},
		{"hand-written parameters", contractTool{contract: good, params: json.RawMessage(`{"type":"object"}`)}, "Parameters() is not the contract's schema"},
		{"other description", contractTool{contract: good, desc: &other}, "Description() is not the contract's description"},
		{"literal limit in the description", contractTool{contract: NewContract[sampleParams](
			"- `limit` (default {{.DefaultLimit}}, at most 500)", sampleVars, sampleBounds()...)},
			`description: "at most 500" is written as a literal`},
		{"literal limit in a tag", contractTool{contract: NewContract[struct {
			N int `json:"n" jsonschema:"Default 7."`
		}]("x", nil)}, `property n: "Default 7" is written as a literal`},
		{"description's limit is not the bound", contractTool{contract: NewContract[sampleParams](
			sampleTemplate, vars("MaxLimit", 400), sampleBounds()...)},
			`description of limit states "at most 400", the schema's bound is 500`},
		{"property's limit is not the bound", contractTool{contract: NewContract[sampleParams](
			sampleTemplate, vars("MaxName", 30), sampleBounds()...)},
			`property items.name states "at most 30", the schema's bound is 40`},
		{"defaults disagree", contractTool{contract: NewContract[sampleParams](
			"- `limit` (default {{.MaxItems}}, at most {{.MaxLimit}}) `state` open shut", sampleVars, sampleBounds()...)},
			`description of limit states "default 8", the property's description says default 50`},
		{"enum value never described", contractTool{contract: NewContract[sampleParams](
			"- `limit` (default {{.DefaultLimit}}) open", sampleVars, sampleBounds()...)},
			`property items.state: enum value "shut" is in neither description`},
		{"unrendered template", contractTool{contract: NewContract[sampleParams](
			"{{.X}} open shut", Vars{"X": "{{.Y}}", "DefaultLimit": 50, "MaxName": 40})},
			`description: unrendered template text "{{"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckContract(tt.tool)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// The struct walk finds every way a schema and a struct can differ.
func TestCheckStructAgainstSchema(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"consistent", `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"},"deep":{"type":"boolean"},
			"items":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"state":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"required":["name","state"],"additionalProperties":false}},
			"raw":{"type":"array","items":{"type":"string"}}},"required":["path"],"additionalProperties":false}`, ""},
		{"missing field", `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`,
			"limit: field Limit is not in the schema"},
		{"extra property", `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"},"deep":{"type":"boolean"},"items":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"state":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"required":["name","state"],"additionalProperties":false}},"raw":{},"glob":{"type":"string"}},"required":["path"],"additionalProperties":false}`,
			"glob: the schema has it, the struct tools.sampleParams has no such field"},
		{"wrong type", `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"string"},"deep":{"type":"boolean"},"items":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"state":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"required":["name","state"],"additionalProperties":false}},"raw":{}},"required":["path"],"additionalProperties":false}`,
			"limit: schema type string, the field is a Go int (integer)"},
		{"nested wrong type", `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"},"deep":{"type":"boolean"},"items":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"state":{"type":"string"},"tags":{"type":"array","items":{"type":"integer"}}},"required":["name","state"],"additionalProperties":false}},"raw":{}},"required":["path"],"additionalProperties":false}`,
			"items.tags: schema type integer, the field is a Go string (string)"},
		{"required differs", `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"},"deep":{"type":"boolean"},"items":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"state":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"required":["name"],"additionalProperties":false}},"raw":{}},"required":["path","deep"],"additionalProperties":false}`,
			"the arguments: required [deep path], but the struct requires [path]"},
		{"nested open object", `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"},"deep":{"type":"boolean"},"items":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"state":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"required":["name","state"]}},"raw":{}},"required":["path"],"additionalProperties":false}`,
			"items: additionalProperties is not false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s jsonschema.Schema
			require.NoError(t, json.Unmarshal([]byte(tt.schema), &s))
			var problems []string
			checkStruct(&s, reflect.TypeFor[sampleParams](), "", func(f string, a ...any) { problems = append(problems, fmt.Sprintf(f, a...)) })
			if tt.want == "" {
				assert.Empty(t, problems)
				return
			}
			assert.Contains(t, strings.Join(problems, "\n"), tt.want)
		})
	}
}

// Templates state sizes and durations through tools/text.
func TestTemplateSizeAndDuration(t *testing.T) {
	for _, tc := range []struct {
		vars Vars
		want string
	}{
		{Vars{"N": 300, "D": 300 * time.Millisecond}, "300 bytes, 300 ms"},
		{Vars{"N": 4000, "D": time.Second}, "4000 bytes, 1 s"},
		{Vars{"N": 16 << 10, "D": 2 * time.Minute}, "16 KiB, 2 min"},
		{Vars{"N": 2 << 20, "D": 1500 * time.Millisecond}, "2 MiB, 1500 ms"},
		{Vars{"N": 1 << 30, "D": time.Hour}, "1 GiB, 1 h"},
	} {
		got, err := render("test", "{{size .N}}, {{dur .D}}", tc.vars)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
}
