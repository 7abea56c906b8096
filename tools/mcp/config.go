package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/fido-nvim/fido/tools/text"
)

// Where a server's configuration came from.
const (
	SourceSetup   = "setup"
	SourceUser    = "user"
	SourceProject = "project"
)

// Defaults of the setup() options.
const (
	DefaultStartTimeout = 5 * time.Second
	DefaultCallTimeout  = 60 * time.Second
)

// ServerConfig is one configured server: a command (stdio) or a URL
// (streamable HTTP).
type ServerConfig struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	URL     string
	Headers map[string]string
	// Type is the entry's type as written ("", "stdio", "http", …); RawEnv
	// and RawHeaders are env and headers before ${VAR} expansion. The trust
	// of a project server is bound to these (see printOf); the question
	// shows them, never an expanded value.
	Type       string
	RawEnv     map[string]string
	RawHeaders map[string]string
	// Source is SourceSetup, SourceUser or SourceProject; File the file it was read from.
	Source string
	File   string
	// Sandbox is the entry's "sandbox" (nil: not written): whether the
	// stdio server runs in the OS sandbox, and with the network or not.
	// Unwritten, a project server is sandboxed when its trust was decided
	// by a Fido that sandboxes (every new trust decision); setup() and
	// user-file servers are not.
	Sandbox *SandboxSpec
	// RawSandbox is the "sandbox" value as written, for the trust print.
	RawSandbox string
}

// SandboxSpec is an entry's "sandbox": true, false or {"network": true}.
type SandboxSpec struct {
	Enabled bool
	Network bool
}

// sandboxJSON reads "sandbox": true | false | {"network": true}.
type sandboxJSON struct {
	spec *SandboxSpec
	raw  string
}

func (x *sandboxJSON) UnmarshalJSON(b []byte) error {
	x.raw = string(bytes.TrimSpace(b))
	var on bool
	if err := json.Unmarshal(b, &on); err == nil {
		x.spec = &SandboxSpec{Enabled: on}
		return nil
	}
	var o struct {
		Network *bool `json:"network"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return fmt.Errorf(`"sandbox" must be true, false or {"network": true}`)
	}
	x.spec = &SandboxSpec{Enabled: true, Network: o.Network != nil && *o.Network}
	return nil
}

// Stdio reports whether the server is started as a local process.
func (c ServerConfig) Stdio() bool { return c.URL == "" }

// Options is the resolved MCP configuration.
type Options struct {
	Servers      []ServerConfig
	AutoApprove  []string
	StartTimeout time.Duration
	CallTimeout  time.Duration
	// Files lists the configuration files that were looked at, for health.
	Files []string
}

// setupJSON is what Lua passes in FIDO_MCP_CONFIG: setup({ mcp = … }) as JSON.
type setupJSON struct {
	Servers        luaMap[serverJSON] `json:"servers"`
	AutoApprove    luaList            `json:"auto_approve"`
	StartTimeoutMS *int               `json:"start_timeout_ms"`
	CallTimeoutMS  *int               `json:"call_timeout_ms"`
}

// serverJSON covers both the setup() shape and the mcpServers file shape.
type serverJSON struct {
	Type    string         `json:"type"`
	Command string         `json:"command"`
	Args    luaList        `json:"args"`
	Env     luaMap[string] `json:"env"`
	Cwd     string         `json:"cwd"`
	URL     string         `json:"url"`
	Headers luaMap[string] `json:"headers"`
	Sandbox *sandboxJSON   `json:"sandbox"`
}

// Lua's JSON encoder writes an empty table as {} or [] alike: luaList and
// luaMap accept either when empty.
type luaList []string

func (l *luaList) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "{}" {
		*l = nil
		return nil
	}
	return json.Unmarshal(b, (*[]string)(l))
}

type luaMap[V any] map[string]V

func (m *luaMap[V]) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "[]" {
		*m = nil
		return nil
	}
	return json.Unmarshal(b, (*map[string]V)(m))
}

type fileJSON struct {
	MCPServers luaMap[serverJSON] `json:"mcpServers"`
}

// ParseSetup reads the setup() options (JSON text; empty means none).
func ParseSetup(setup string, getenv func(string) string) (Options, error) {
	o := Options{StartTimeout: DefaultStartTimeout, CallTimeout: DefaultCallTimeout}
	if strings.TrimSpace(setup) == "" {
		return o, nil
	}
	var s setupJSON
	if err := json.Unmarshal([]byte(setup), &s); err != nil {
		return o, fmt.Errorf("setup({ mcp = … }): %s", text.Collapse(err.Error()))
	}
	if s.StartTimeoutMS != nil && *s.StartTimeoutMS >= 0 {
		o.StartTimeout = time.Duration(*s.StartTimeoutMS) * time.Millisecond
	}
	if s.CallTimeoutMS != nil && *s.CallTimeoutMS > 0 {
		o.CallTimeout = time.Duration(*s.CallTimeoutMS) * time.Millisecond
	}
	o.AutoApprove = s.AutoApprove
	servers, err := convert(s.Servers, SourceSetup, "setup({ mcp = … })", getenv)
	o.Servers = servers
	return o, err
}

// MaxConfigFile caps an MCP configuration file (.mcp.json, mcp.json): a
// larger one is not read.
const MaxConfigFile = 1 << 20

// Reader reads a configuration file the way Fido reads the files it reads
// on its own: only a regular file, opened without blocking, at most limit
// bytes (confined.ReadFile on the workspace for .mcp.json, confined.ReadPath
// for the user's file). A FIFO, a device or a symlink leading out of its
// tree is an error, never a read.
type Reader func(name string, limit int64) ([]byte, error)

// LoadFile reads a file in the {"mcpServers": {…}} format: name is given to
// read, label names it in messages. A missing file is no servers and no
// error; any other problem is one line naming the file.
func LoadFile(read Reader, name, label, source string, getenv func(string) string) ([]ServerConfig, error) {
	b, err := read(name, MaxConfigFile)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		why := err
		var pe *fs.PathError
		if errors.As(err, &pe) {
			why = pe.Err
		}
		return nil, fmt.Errorf("%s: not read: %s; Fido reads only a regular file of at most %d MiB inside the workspace, so none of its servers start", label, text.Collapse(why.Error()), MaxConfigFile>>20)
	}
	var f fileJSON
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: not valid MCP configuration JSON: %s", label, describeJSONError(b, err))
	}
	return convert(f.MCPServers, source, label, getenv)
}

// convert checks each entry and expands ${VAR}; a broken entry is reported
// and left out, the others are kept.
func convert(m luaMap[serverJSON], source, file string, getenv func(string) string) ([]ServerConfig, error) {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []ServerConfig
	var errs []string
	for _, name := range names {
		s := m[name]
		c := ServerConfig{Name: name, Source: source, File: file, Type: s.Type,
			Command: expand(s.Command, getenv), Cwd: expand(s.Cwd, getenv), URL: expand(s.URL, getenv),
			RawEnv: copyMap(s.Env), RawHeaders: copyMap(s.Headers)}
		for _, a := range s.Args {
			c.Args = append(c.Args, expand(a, getenv))
		}
		c.Env = expandMap(s.Env, getenv)
		if s.Sandbox != nil {
			c.Sandbox, c.RawSandbox = s.Sandbox.spec, s.Sandbox.raw
		}
		c.Headers = expandMap(s.Headers, getenv)
		var problem string
		switch {
		case strings.TrimSpace(name) == "":
			problem = "a server has an empty name"
		case s.Type != "" && s.Type != "stdio" && s.Type != "http" && s.Type != "streamable-http":
			problem = fmt.Sprintf("server %q: type %q is not supported (use stdio or http)", name, s.Type)
		case c.Command == "" && c.URL == "":
			problem = fmt.Sprintf("server %q: needs a command or a url", name)
		case c.Command != "" && c.URL != "":
			problem = fmt.Sprintf("server %q: give a command or a url, not both", name)
		case s.Type == "stdio" && c.Command == "":
			problem = fmt.Sprintf("server %q: type stdio needs a command", name)
		case (s.Type == "http" || s.Type == "streamable-http") && c.URL == "":
			problem = fmt.Sprintf("server %q: type http needs a url", name)
		}
		if problem != "" {
			errs = append(errs, problem)
			continue
		}
		out = append(out, c)
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%s: %s", file, strings.Join(errs, "; "))
	}
	return out, nil
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// expand replaces ${VAR} (and ${VAR:-default}) from the environment.
func expand(s string, getenv func(string) string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	return varRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := varRef.FindStringSubmatch(ref)
		if v := getenv(m[1]); v != "" {
			return v
		}
		return m[2]
	})
}

func copyMap(m luaMap[string]) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func expandMap(m luaMap[string], getenv func(string) string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = expand(v, getenv)
	}
	return out
}

// Merge joins the servers of every source: setup() first, then the user
// file, then the project file; a name already taken is shadowed (reported).
func Merge(lists ...[]ServerConfig) (out []ServerConfig, shadowed []string) {
	seen := map[string]ServerConfig{}
	for _, l := range lists {
		for _, c := range l {
			if prev, dup := seen[c.Name]; dup {
				shadowed = append(shadowed, fmt.Sprintf("%s: server %q is already defined by %s; this one is ignored", c.File, c.Name, prev.File))
				continue
			}
			seen[c.Name] = c
			out = append(out, c)
		}
	}
	return out, shadowed
}

// describeJSONError names the line and column of a syntax error.
func describeJSONError(b []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := position(b, se.Offset)
		return fmt.Sprintf("line %d, column %d: %s", line, col, se.Error())
	case errors.As(err, &te):
		line, col := position(b, te.Offset)
		return fmt.Sprintf("line %d, column %d: %s must be %s, not %s", line, col, te.Field, jsonKind(te.Type.Kind()), te.Value)
	}
	return text.Collapse(err.Error())
}

func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	}
	return k.String()
}

func position(b []byte, off int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < off && i < int64(len(b)); i++ {
		if b[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
