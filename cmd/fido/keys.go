package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/fido-nvim/fido/agent"
	"github.com/fido-nvim/fido/tools/secret"
	"github.com/fido-nvim/fido/tools/text"
)

// The key commands (setup({ api_key_cmd = …, tavily_api_key_cmd = … })):
// argv as a JSON list of strings, run when the key itself is not set, so the
// key never sits in an environment variable.
const (
	apiKeyCmdEnv    = "FIDO_API_KEY_CMD"
	tavilyKeyCmdEnv = "FIDO_TAVILY_API_KEY_CMD"
	keyCmdTimeout   = time.Minute // room for a passphrase prompt (pinentry)
	keyCmdMaxOutput = 64 << 10
)

// resolveKeys completes cfg's keys from the key commands, registers every
// key with the redactor and removes the key variables from the process
// environment, so no child process ever inherits them. It returns problems
// to show the user; they never hold a key.
func resolveKeys(ctx context.Context, cfg *agent.Config, getenv func(string) string) []string {
	var problems []string
	for _, k := range []struct {
		key     *string
		env     string
		option  string
		varName string
	}{
		{&cfg.APIKey, apiKeyCmdEnv, "api_key_cmd", "OPENROUTER_API_KEY"},
		{&cfg.TavilyKey, tavilyKeyCmdEnv, "tavily_api_key_cmd", "TAVILY_API_KEY"},
	} {
		spec := strings.TrimSpace(getenv(k.env))
		if *k.key != "" || spec == "" {
			continue
		}
		key, err := runKeyCommand(ctx, spec)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s failed: %v (%s stays unset)", k.option, err, k.varName))
			continue
		}
		*k.key = key
	}
	secret.Add(cfg.APIKey)
	secret.Add(cfg.TavilyKey)
	for _, name := range secret.Env {
		_ = os.Unsetenv(name)
	}
	return problems
}

// runKeyCommand runs argv (a JSON list) and returns the first line of its
// output, trimmed (`pass show` prints the password first). Its output never
// appears in an error.
func runKeyCommand(ctx context.Context, spec string) (string, error) {
	var argv []string
	if err := json.Unmarshal([]byte(spec), &argv); err != nil || len(argv) == 0 || argv[0] == "" {
		return "", errors.New(`the command must be a non-empty list of strings, e.g. { "pass", "show", "openrouter" }`)
	}
	ctx, cancel := context.WithTimeout(ctx, keyCmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = secret.ScrubbedEnv(os.Environ())
	var out, errOut bytes.Buffer
	cmd.Stdout = &limitedBuffer{buf: &out, max: keyCmdMaxOutput}
	cmd.Stderr = &limitedBuffer{buf: &errOut, max: 4 << 10}
	if err := cmd.Run(); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return "", fmt.Errorf("%s did not finish within %s", argv[0], keyCmdTimeout)
		}
		msg := strings.TrimSpace(errOut.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg != "" {
			return "", fmt.Errorf("%s: %v: %s", argv[0], err, text.Shorten(msg, 200))
		}
		return "", fmt.Errorf("%s: %v", argv[0], err)
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	key := strings.TrimSpace(first)
	if key == "" {
		return "", fmt.Errorf("%s printed no key on its first line", argv[0])
	}
	return key, nil
}

// limitedBuffer keeps the first max bytes written and drops the rest.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
