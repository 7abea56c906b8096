package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/adrg/xdg"

	"github.com/fido-nvim/fido/tools/permission"
)

// DefaultModel is used when FIDO_MODEL is not set: the original Fido's
// default, a fast and inexpensive tool-using model on OpenRouter.
const DefaultModel = "xiaomi/mimo-v2.6-flash"

// DefaultBaseURL is OpenRouter's OpenAI-compatible API.
const DefaultBaseURL = "https://openrouter.ai/api/v1"

// DefaultIdleTimeout is how long a model stream may go without a data line
// before the provider gives up on it (FIDO_IDLE_TIMEOUT).
const DefaultIdleTimeout = 120 * time.Second

// Config is the resolved configuration of a Fido process.
type Config struct {
	APIKey    string
	Model     string
	BaseURL   string
	Reasoning string
	TavilyKey string
	TavilyURL string
	// StateRoot holds per-workspace state (FIDO_STATE_DIR, else <XDG state home>/fido).
	StateRoot string
	// ContextTokens is the context budget (FIDO_CONTEXT_TOKENS; 0 = default).
	ContextTokens int
	// PreferredModels come first in /model's picker (FIDO_MODELS,
	// comma-separated; setup({ models = { … } })).
	PreferredModels []string
	// Permissions are the user's command rules from setup({ permissions =
	// { allow = {…}, deny = {…} } }) (FIDO_PERMISSIONS, JSON).
	Permissions []permission.Rule
	// Resume continues the workspace's newest conversation at start
	// (FIDO_RESUME: "last", the default, or "new").
	Resume bool
	// Edits is the initial edit mode (FIDO_EDITS: auto or review).
	Edits string
	// ConfigDir holds the user's own Fido files: AGENTS.md, commands/
	// (<XDG config home>/fido).
	ConfigDir string
	// IdleTimeout ends a model stream that sent no data for this long
	// (FIDO_IDLE_TIMEOUT: a Go duration such as "90s" or "500ms", or a
	// number of seconds; default DefaultIdleTimeout).
	IdleTimeout time.Duration
	// Warnings are problems with the environment worth showing the user
	// (the value was ignored and the default used).
	Warnings []string
}

// ConfigFromEnv resolves the configuration from environment variables.
func ConfigFromEnv(getenv func(string) string) Config {
	c := Config{
		APIKey:    strings.TrimSpace(getenv("OPENROUTER_API_KEY")),
		Model:     strings.TrimSpace(getenv("FIDO_MODEL")),
		BaseURL:   strings.TrimSpace(getenv("FIDO_BASE_URL")),
		Reasoning: strings.TrimSpace(getenv("FIDO_REASONING")),
		TavilyKey: strings.TrimSpace(getenv("TAVILY_API_KEY")),
		TavilyURL: strings.TrimSpace(getenv("FIDO_TAVILY_URL")),
		StateRoot: strings.TrimSpace(getenv("FIDO_STATE_DIR")),
		Edits:     strings.TrimSpace(getenv("FIDO_EDITS")),
	}
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if n, err := strconv.Atoi(strings.TrimSpace(getenv("FIDO_CONTEXT_TOKENS"))); err == nil && n > 0 {
		c.ContextTokens = n
	}
	c.IdleTimeout = DefaultIdleTimeout
	if v := strings.TrimSpace(getenv("FIDO_IDLE_TIMEOUT")); v != "" {
		if d, ok := parseTimeout(v); ok {
			c.IdleTimeout = d
		} else {
			c.Warnings = append(c.Warnings, fmt.Sprintf("FIDO_IDLE_TIMEOUT=%q is not a positive duration (e.g. 90s, 2m, or seconds); using %s", v, DefaultIdleTimeout))
		}
	}
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	if c.Reasoning == "default" {
		c.Reasoning = ""
	}
	if c.StateRoot == "" {
		c.StateRoot = filepath.Join(xdg.StateHome, "fido")
	}
	if raw := strings.TrimSpace(getenv("FIDO_PERMISSIONS")); raw != "" {
		rules, err := parsePermissions(raw)
		if err != nil {
			c.Warnings = append(c.Warnings, "FIDO_PERMISSIONS (setup's permissions) ignored: "+err.Error())
		}
		c.Permissions = rules
	}
	for _, m := range strings.Split(getenv("FIDO_MODELS"), ",") {
		if m = strings.TrimSpace(m); m != "" {
			c.PreferredModels = append(c.PreferredModels, m)
		}
	}
	c.Resume = strings.TrimSpace(getenv("FIDO_RESUME")) != "new"
	c.ConfigDir = filepath.Join(xdg.ConfigHome, "fido")
	return c
}

// parseTimeout reads a positive Go duration or a number of seconds.
func parseTimeout(v string) (time.Duration, bool) {
	if d, err := time.ParseDuration(v); err == nil {
		return d, d > 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs > 0 && secs < 1e9 {
		return time.Duration(secs * float64(time.Second)), true
	}
	return 0, false
}

// MissingKeyMessage is the one line shown when no API key is configured.
const MissingKeyMessage = "OPENROUTER_API_KEY is not set: export OPENROUTER_API_KEY=sk-or-… before starting Neovim, or pass require(\"fido\").setup({ api_key_cmd = { \"pass\", \"show\", \"openrouter\" } }) (or api_key = …)"

var nonSlug = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// WorkspaceStateDir is <root>/workspaces/<slug>-<checksum> for a workspace:
// readable, and unique per canonical path.
func (c Config) WorkspaceStateDir(workspace string) string {
	abs, err := filepath.Abs(workspace)
	if err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
	} else {
		abs = workspace
	}
	sum := sha256.Sum256([]byte(abs))
	slug := strings.Trim(nonSlug.ReplaceAllString(filepath.Base(abs), "-"), "-")
	if slug == "" {
		slug = "root"
	}
	if len(slug) > 40 {
		slug = slug[:40]
	}
	return filepath.Join(c.StateRoot, "workspaces", slug+"-"+hex.EncodeToString(sum[:])[:12])
}

// parsePermissions reads {"allow": ["go test", …], "deny": ["git push", …]};
// an entry "exact …" is an exact-command rule.
func parsePermissions(raw string) ([]permission.Rule, error) {
	var in struct {
		Allow []string `json:"allow"`
		Deny  []string `json:"deny"`
	}
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		return nil, fmt.Errorf("not {allow = {…}, deny = {…}}: %v", err)
	}
	var out []permission.Rule
	for _, set := range []struct {
		effect permission.Effect
		lines  []string
	}{{permission.Deny, in.Deny}, {permission.Allow, in.Allow}} {
		for _, l := range set.lines {
			r, err := permission.ParseRule(string(set.effect) + " " + l)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}
