package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// CheckContract reports every way tool t's advertised contract disagrees
// with itself: the tool must take its Parameters and Description from its
// Contract; the schema must have exactly the params struct's fields, with
// their JSON types and required-ness; no template may be left unrendered;
// no limit may be written into a template as a literal number instead of
// being rendered from a constant; and a limit or default a description
// states for a property must be the schema's bound, or the default its own
// description states. Tests run it over every built-in tool.
func CheckContract(t Tool) error {
	ct, ok := t.(Contracted)
	if !ok {
		return fmt.Errorf("%s: no Contract: its schema and description are not generated from its params struct", t.Name())
	}
	c := ct.Contract()
	if err := c.Err(); err != nil {
		return fmt.Errorf("%s: %w", t.Name(), err)
	}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var advertised bytes.Buffer
	if err := json.Compact(&advertised, t.Parameters()); err != nil || !bytes.Equal(advertised.Bytes(), c.Parameters()) {
		add("Parameters() is not the contract's schema")
	}
	if t.Description() != c.Description() {
		add("Description() is not the contract's description")
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(c.Parameters(), &s); err != nil {
		add("the schema does not decode: %v", err)
	} else {
		checkStruct(&s, c.params, "", add)
		checkTexts(c, &s, add)
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %w", t.Name(), errors.New(strings.Join(problems, "; ")))
}

// checkStruct compares an object schema with the struct type its values
// decode into, walking nested structs and arrays of structs.
func checkStruct(s *jsonschema.Schema, t reflect.Type, path string, add func(string, ...any)) {
	where := path
	if where == "" {
		where = "the arguments"
	}
	if s.Type != "object" {
		add("%s: schema type %s, the struct is an object", where, schemaType(s))
		return
	}
	if s.AdditionalProperties == nil || s.AdditionalProperties.Not == nil {
		add("%s: additionalProperties is not false, but unknown arguments are refused", where)
	}
	fields := map[string]reflect.StructField{}
	var required []string
	for _, f := range reflect.VisibleFields(t) {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous || !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f
		if !slices.Contains(strings.Split(opts, ","), "omitempty") && !slices.Contains(strings.Split(opts, ","), "omitzero") {
			required = append(required, name)
		}
	}
	for name, f := range fields {
		p := s.Properties[name]
		child := joinPath(path, name)
		if p == nil {
			add("%s: field %s is not in the schema", child, f.Name)
			continue
		}
		checkType(p, f.Type, child, add)
	}
	for name := range s.Properties {
		if _, ok := fields[name]; !ok {
			add("%s: the schema has it, the struct %s has no such field", joinPath(path, name), t)
		}
	}
	got := slices.Clone(s.Required)
	slices.Sort(got)
	slices.Sort(required)
	if !slices.Equal(got, required) {
		add("%s: required %v, but the struct requires %v (fields without omitempty)", where, got, required)
	}
}

// checkType compares one property's schema with its field's Go type.
func checkType(p *jsonschema.Schema, t reflect.Type, path string, add func(string, ...any)) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[json.RawMessage]() || t.Kind() == reflect.Interface {
		return // decoded by the tool itself: any schema fits
	}
	want := ""
	switch t.Kind() {
	case reflect.String:
		want = "string"
	case reflect.Bool:
		want = "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want = "integer"
	case reflect.Float32, reflect.Float64:
		want = "number"
	case reflect.Slice, reflect.Array:
		want = "array"
	case reflect.Struct, reflect.Map:
		want = "object"
	}
	if p.Type != want {
		add("%s: schema type %s, the field is a Go %s (%s)", path, schemaType(p), t, want)
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		checkStruct(p, t, path, add)
	case reflect.Slice, reflect.Array:
		if p.Items == nil {
			add("%s: an array without items", path)
			return
		}
		checkType(p.Items, t.Elem(), path, add)
	}
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

var (
	// limitPhrase finds a number stated as a limit or a default.
	limitPhrase = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(default|at most|up to|at least|maximum|minimum|longer than|more than|over|cut at|within|after|about|capped at)\s+(\d+(?:,\d{3})*)`)
	})
	// propertyMention is where a description names a property: `name`, or a
	// list item "- name:".
	propertyMention = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("`([a-z_]+)`|(?m)^- ([a-z_]+):")
	})
)

// checkTexts checks the descriptions against the schema's bounds.
func checkTexts(c *Contract, s *jsonschema.Schema, add func(string, ...any)) {
	for _, src := range c.sources {
		for _, m := range limitPhrase().FindAllStringSubmatch(src.text, -1) {
			if m[2] != "0" { // zero is the Go zero value, not a tunable limit
				add("%s: %q is written as a literal; render it from the constant", src.where, m[0])
			}
		}
	}
	props := map[string]*jsonschema.Schema{}
	texts := []struct{ where, text string }{{"description", c.Description()}}
	visit(s, "", func(path string, p *jsonschema.Schema) {
		name := path[strings.LastIndex(path, ".")+1:]
		if _, dup := props[name]; !dup {
			props[name] = p
		}
		texts = append(texts, struct{ where, text string }{"property " + path, p.Description})
		checkStated(p.Description, p, "property "+path, add)
	})
	for _, t := range texts {
		for _, bad := range []string{"{{", "}}", "<no value>"} {
			if strings.Contains(t.text, bad) {
				add("%s: unrendered template text %q", t.where, bad)
			}
		}
	}
	// In the description, a limit belongs to the last property named before
	// it on the same line.
	for _, line := range strings.Split(c.Description(), "\n") {
		ms := propertyMention().FindAllStringSubmatchIndex(line, -1)
		for i, m := range ms {
			var name string
			if m[2] >= 0 {
				name = line[m[2]:m[3]]
			} else {
				name = line[m[4]:m[5]]
			}
			end := len(line)
			if i+1 < len(ms) {
				end = ms[i+1][0]
			}
			if p := props[name]; p != nil {
				checkStated(line[m[1]:end], p, "description of "+name, add)
			}
		}
	}
	visit(s, "", func(path string, p *jsonschema.Schema) {
		for _, v := range p.Enum {
			if v, ok := v.(string); ok && !strings.Contains(c.Description(), v) && !strings.Contains(p.Description, v) {
				add("property %s: enum value %q is in neither description", path, v)
			}
		}
	})
}

// checkStated compares the first upper limit and the first default that
// text states with property p's bound and its own description's default.
func checkStated(text string, p *jsonschema.Schema, where string, add func(string, ...any)) {
	upper := -1
	switch {
	case p.Maximum != nil:
		upper = int(*p.Maximum)
	case p.MaxItems != nil:
		upper = *p.MaxItems
	case p.MaxLength != nil:
		upper = *p.MaxLength
	}
	own := stated(p.Description, "default")
	seenUpper, seenDefault := false, false
	for _, m := range limitPhrase().FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(strings.ReplaceAll(m[2], ",", ""))
		switch strings.ToLower(m[1]) {
		case "at most", "up to":
			if !seenUpper && upper >= 0 && n != upper {
				add("%s states %q, the schema's bound is %d", where, m[0], upper)
			}
			seenUpper = true
		case "default":
			if !seenDefault && own >= 0 && n != own {
				add("%s states %q, the property's description says default %d", where, m[0], own)
			}
			seenDefault = true
		}
	}
}

// stated is the first number text states after phrase, or -1.
func stated(text, phrase string) int {
	for _, m := range limitPhrase().FindAllStringSubmatch(text, -1) {
		if strings.EqualFold(m[1], phrase) {
			n, _ := strconv.Atoi(strings.ReplaceAll(m[2], ",", ""))
			return n
		}
	}
	return -1
}

// visit calls f on every property of a decoded schema, parents first, in
// name order (a decoded schema has no property order).
func visit(s *jsonschema.Schema, path string, f func(path string, s *jsonschema.Schema)) {
	if s.Items != nil {
		visit(s.Items, path, f)
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		child := joinPath(path, name)
		f(child, s.Properties[name])
		visit(s.Properties[name], child, f)
	}
}
