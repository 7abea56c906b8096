package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"text/template"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/fido-nvim/fido/tools/text"
)

// Contract is a tool's model-facing argument contract, built once from one
// source: the params struct P the tool decodes its arguments into (property
// names, JSON types and required-ness from the struct and its json tags,
// property descriptions from its `jsonschema` tags), the bounds the tool
// enforces, given as its Go constants, and the description, a text/template
// over the same constants. A limit changed in code thus changes the schema
// and every text that states it; CheckContract verifies that they agree.
//
// A contract is built on first use (NewRegistry), once, so processes that
// never list tools (the JavaScript worker) do not pay for it.
type Contract struct {
	params   reflect.Type
	template string
	vars     Vars
	bounds   []Bound

	once        sync.Once
	err         error
	schema      json.RawMessage
	description string
	// sources are the templates as written (the description and each
	// property's tag), kept for CheckContract.
	sources []templateSource
}

// templateSource is one template as written and where it comes from.
type templateSource struct{ where, text string }

// Contracted is implemented by tools whose Parameters and Description come
// from a Contract; every built-in tool is one (MCP tools bring the schemas
// of their servers).
type Contracted interface {
	Contract() *Contract
}

// Vars are the named values a contract's templates state, e.g.
// Vars{"MaxLimit": readMaxLimit} for "at most {{.MaxLimit}}". Besides the
// values, templates may use {{size .N}} (a byte count as "256 KiB") and
// {{dur .D}} (a time.Duration as "300 ms").
type Vars map[string]any

// Bound sets one JSON Schema keyword of one property, named by its JSON
// path: "limit", or "items.status" for the status of each element of the
// items array.
type Bound struct {
	path    string
	keyword string
	apply   func(*jsonschema.Schema) error
}

// Minimum bounds an integer property from below.
func Minimum(path string, n int) Bound {
	return numberBound(path, "minimum", n, func(s *jsonschema.Schema, v *float64) { s.Minimum = v })
}

// Maximum bounds an integer property from above.
func Maximum(path string, n int) Bound {
	return numberBound(path, "maximum", n, func(s *jsonschema.Schema, v *float64) { s.Maximum = v })
}

func numberBound(path, keyword string, n int, set func(*jsonschema.Schema, *float64)) Bound {
	return Bound{path, keyword, func(s *jsonschema.Schema) error {
		if s.Type != "integer" && s.Type != "number" {
			return fmt.Errorf("%s needs a number, the property is %s", keyword, schemaType(s))
		}
		v := float64(n)
		set(s, &v)
		return nil
	}}
}

// MinLength bounds the length of a string property from below.
func MinLength(path string, n int) Bound {
	return countBound(path, "minLength", "string", n, func(s *jsonschema.Schema, v *int) { s.MinLength = v })
}

// MaxLength bounds the length of a string property from above.
func MaxLength(path string, n int) Bound {
	return countBound(path, "maxLength", "string", n, func(s *jsonschema.Schema, v *int) { s.MaxLength = v })
}

// MinItems bounds the length of an array property from below.
func MinItems(path string, n int) Bound {
	return countBound(path, "minItems", "array", n, func(s *jsonschema.Schema, v *int) { s.MinItems = v })
}

// MaxItems bounds the length of an array property from above.
func MaxItems(path string, n int) Bound {
	return countBound(path, "maxItems", "array", n, func(s *jsonschema.Schema, v *int) { s.MaxItems = v })
}

func countBound(path, keyword, typ string, n int, set func(*jsonschema.Schema, *int)) Bound {
	return Bound{path, keyword, func(s *jsonschema.Schema) error {
		if s.Type != typ {
			return fmt.Errorf("%s needs a %s, the property is %s", keyword, typ, schemaType(s))
		}
		set(s, &n)
		return nil
	}}
}

// Enum lists the values a string property accepts, in the order given.
func Enum[S ~string](path string, values ...S) Bound {
	return Bound{path, "enum", func(s *jsonschema.Schema) error {
		if s.Type != "string" {
			return fmt.Errorf("enum needs a string, the property is %s", schemaType(s))
		}
		if len(values) == 0 {
			return fmt.Errorf("enum needs values")
		}
		s.Enum = make([]any, len(values))
		for i, v := range values {
			s.Enum[i] = string(v)
		}
		return nil
	}}
}

// ArrayOf advertises a property the tool decodes itself (a json.RawMessage
// field) as an array of itemType ("string", "integer", …); the tool may
// accept more shapes than it advertises.
func ArrayOf(path, itemType string) Bound {
	return Bound{path, "items", func(s *jsonschema.Schema) error {
		if s.Items == nil || s.Items.Type != "integer" || s.Items.Maximum == nil || *s.Items.Maximum != 255 {
			return fmt.Errorf("ArrayOf is for json.RawMessage fields, the property is %s", schemaType(s))
		}
		*s = jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: itemType}, Description: s.Description}
		return nil
	}}
}

// NewContract is the contract of the tool whose arguments decode into P.
// description is the tool description's template; vars are the values its
// templates and P's `jsonschema` tags state; bounds add the keywords Go
// types cannot say. Inputs that do not fit together (a bound on a missing
// property, a template naming a missing value) are a programming error that
// Err reports and NewRegistry refuses.
func NewContract[P any](description string, vars Vars, bounds ...Bound) *Contract {
	return &Contract{params: reflect.TypeFor[P](), template: description, vars: vars, bounds: bounds}
}

// Parameters is the JSON schema of the arguments: the same bytes on every
// call (nil when Err is set).
func (c *Contract) Parameters() json.RawMessage {
	c.once.Do(c.build)
	return c.schema
}

// Description is the rendered tool description ("" when Err is set).
func (c *Contract) Description() string {
	c.once.Do(c.build)
	return c.description
}

// Err says why the contract could not be built, if it could not.
func (c *Contract) Err() error {
	c.once.Do(c.build)
	return c.err
}

func (c *Contract) build() {
	if err := c.generate(); err != nil {
		c.err = fmt.Errorf("contract of %s: %w", c.params, err)
		c.schema, c.description, c.sources = nil, "", nil
	}
}

func (c *Contract) generate() error {
	if c.params.Kind() != reflect.Struct {
		return fmt.Errorf("params must be a struct, not %s", c.params.Kind())
	}
	s, err := jsonschema.ForType(c.params, nil)
	if err != nil {
		return err
	}
	walkSchema(s, "", func(_ string, s *jsonschema.Schema) { dropNull(s) })
	for _, b := range c.bounds {
		p := lookupProperty(s, b.path)
		if p == nil {
			return fmt.Errorf("%s: no property %q", b.keyword, b.path)
		}
		if err := b.apply(p); err != nil {
			return fmt.Errorf("%s: %w", b.path, err)
		}
	}
	c.sources = []templateSource{{"description", c.template}}
	if c.description, err = render("description", c.template, c.vars); err != nil {
		return err
	}
	walkSchema(s, "", func(path string, p *jsonschema.Schema) {
		if err != nil || p.Description == "" {
			return
		}
		c.sources = append(c.sources, templateSource{"property " + path, p.Description})
		p.Description, err = render("property "+path, p.Description, c.vars)
	})
	if err != nil {
		return err
	}
	c.schema, err = json.Marshal(s)
	return err
}

// dropNull advertises a slice or pointer field as its element type: the
// library allows null for them (Go decodes null into either), but null is
// never a meaningful argument.
func dropNull(s *jsonschema.Schema) {
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
}

// walkSchema calls f on every property schema below s (and on array items
// as their property's path), parents before children, in property order.
func walkSchema(s *jsonschema.Schema, path string, f func(path string, s *jsonschema.Schema)) {
	if s.Items != nil {
		walkSchema(s.Items, path, f)
	}
	for _, name := range s.PropertyOrder {
		p := s.Properties[name]
		child := name
		if path != "" {
			child = path + "." + name
		}
		f(child, p)
		walkSchema(p, child, f)
	}
}

// lookupProperty finds the property at a dotted JSON path, stepping through
// array items.
func lookupProperty(s *jsonschema.Schema, path string) *jsonschema.Schema {
	for _, name := range strings.Split(path, ".") {
		for s.Items != nil {
			s = s.Items
		}
		if s = s.Properties[name]; s == nil {
			return nil
		}
	}
	return s
}

func schemaType(s *jsonschema.Schema) string {
	switch {
	case s.Type != "":
		return s.Type
	case len(s.Types) > 0:
		return strings.Join(s.Types, " or ")
	}
	return "untyped"
}

// templateFuncs are what contract templates may call besides the vars.
var templateFuncs = template.FuncMap{"size": func(n int) string { return text.Size(int64(n)) }, "dur": text.ExactDuration}

func render(where, src string, vars Vars) (string, error) {
	t, err := template.New(where).Option("missingkey=error").Funcs(templateFuncs).Parse(src)
	if err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, vars); err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	return b.String(), nil
}
