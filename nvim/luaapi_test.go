package nvim

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// luaClasses reads the LuaCATS classes of a Lua file: class -> field ->
// type (lua-language-server completes setup({ … }) from them).
func luaClasses(src string) map[string]map[string]string {
	classRe := regexp.MustCompile(`^---@class ([\w.]+)`)
	fieldRe := regexp.MustCompile(`^---@field ([\w_]+)\??\s+(\S+)`)
	out := map[string]map[string]string{}
	var cur string
	for _, line := range strings.Split(src, "\n") {
		if m := classRe.FindStringSubmatch(line); m != nil {
			cur = m[1]
			out[cur] = map[string]string{}
		} else if m := fieldRe.FindStringSubmatch(line); m != nil && cur != "" {
			out[cur][m[1]] = m[2]
		} else if !strings.HasPrefix(line, "---") {
			cur = ""
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Every option of setup() (the defaults in config.lua, nil ones included)
// is a field of fido.Config, and every nested table's keys are the fields
// of its class; every field is an option setup() accepts.
func TestConfigClassCoversEveryOption(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(nvimtest.RepoRoot(t), "lua", "fido", "config.lua"))
	require.NoError(t, err)
	classes := luaClasses(string(src))
	cfg := classes["fido.Config"]
	require.NotEmpty(t, cfg, "config.lua has no ---@class fido.Config")

	// The top-level keys of M.defaults, from the source (nil defaults leave
	// no key in the table itself).
	block := string(src)[strings.Index(string(src), "M.defaults = {"):]
	block = block[:strings.Index(block, "\n}\n")]
	top := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  ([a-z_]+) = `).FindAllStringSubmatch(block, -1) {
		top[m[1]] = true
	}
	assert.Equal(t, sortedKeys(top), sortedKeys(cfg), "fido.Config's fields are the options")

	n := nvimtest.Start(t, nvimtest.Options{})
	var nested map[string][]string // option path -> keys of its default table
	n.Lua(t, &nested, `local out = {}
local function walk(prefix, t)
  for k, v in pairs(t) do
    if type(v) == "table" and next(v) ~= nil and type(next(v)) == "string" then
      out[prefix .. k] = vim.tbl_keys(v)
      walk(prefix .. k .. ".", v)
    end
  end
end
walk("", require("fido.config").defaults)
return out`)
	require.Contains(t, nested, "review.keymaps")
	for path, ks := range nested {
		class, fields := "fido.Config", cfg
		for _, part := range strings.Split(path, ".") {
			class = fields[part]
			fields = classes[class]
			require.NotNil(t, fields, "%s: its type %q is not a class in config.lua", path, class)
		}
		sort.Strings(ks)
		for _, k := range ks {
			assert.Contains(t, fields, k, "%s.%s is not a field of %s", path, k, class)
		}
	}
	for name, typ := range cfg {
		if c, ok := classes[typ]; ok {
			assert.Contains(t, nested, name, "%s (%s) has no default table", name, typ)
			assert.NotEmpty(t, c)
		}
		var msg string
		n.Lua(t, &msg, `local _, err = require("fido.config").resolve({ [...] = vim.NIL }); return err or ""`, name)
		assert.NotContains(t, msg, "unknown option "+name)
	}
}

// :checkhealth fido is one function per section, in the order of
// fido.health's sections (a new section is one more row).
func TestCheckhealthOneFunctionPerSection(t *testing.T) {
	n := nvimtest.Start(t, nvimtest.Options{})
	var titles []string
	n.Lua(t, &titles, `local out = {}
for _, s in ipairs(require("fido.health").sections) do
  assert(type(s[2]) == "function", s[1])
  table.insert(out, s[1])
end
return out`)
	assert.Equal(t, []string{"Fido binary", "Command sandbox (bash_exec)", "Neovim", "Language servers (lsp_* tools, diagnostics after edits)", "Provider",
		"Statusline plugins", "Questions (approvals, reviews, MCP trust, ask_user)", "Instructions and your commands",
		"MCP servers", "Tools"}, titles)
	require.NoError(t, n.Command("checkhealth fido"))
	var report string
	n.Lua(t, &report, `return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")`)
	at := 0
	for _, title := range titles {
		i := strings.Index(report[at:], title)
		require.GreaterOrEqual(t, i, 0, "section %q is not in the report (in order):\n%s", title, report)
		at += i + len(title)
	}
}

// Loading the plugin (its user commands) loads none of Fido's modules but
// the mention tracking; a command loads the rest when it runs.
func TestPluginLoadsFidoOnFirstCommand(t *testing.T) {
	n := nvimtest.Start(t, nvimtest.Options{})
	const loaded = `local out = {}
for name in pairs(package.loaded) do
  if name == "fido" or name:match("^fido%.") then table.insert(out, name) end
end
table.sort(out)
return out`
	var before []string
	n.Lua(t, &before, loaded)
	assert.Equal(t, []string{"fido.config", "fido.context", "fido.mentions"}, before)
	var completed []string
	n.Lua(t, &completed, `return vim.fn.getcompletion("Fido /pla", "cmdline")`)
	assert.Contains(t, completed, "/plan")
	var after []string
	n.Lua(t, &after, loaded)
	assert.Contains(t, after, "fido.commands")
	assert.Contains(t, after, "fido")
}
