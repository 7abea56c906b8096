package nvim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/nvim/nvimtest"
)

// The host's stderr reaches fido.log in whole lines, even when a line
// arrives in two pieces, and the log stays under LOG_MAX_BYTES: a full log
// becomes fido.log.1 when the host starts and again while it writes.
func TestHostLogKeepsWholeLinesAndRotates(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "fido.log")
	old := strings.Repeat("an old line from an earlier session\n", 100) // 3,600 bytes
	require.NoError(t, os.WriteFile(logPath, []byte(old), 0o644))
	// A "host" that writes a line in two pieces, then 4 KB of lines, and exits.
	bin := filepath.Join(dir, "fake-host")
	require.NoError(t, os.WriteFile(bin, []byte(`#!/bin/sh
printf 'one line in ' >&2
sleep 0.3
printf 'two pieces\n' >&2
i=0
while [ $i -lt 100 ]; do
  echo "line $i: the host writes enough to fill the log" >&2
  i=$((i+1))
done
printf 'last words without a newline' >&2
`), 0o755))
	n := nvimtest.Start(t, nvimtest.Options{})
	n.Lua(t, nil, `local bin, log = ...
require("fido").setup({ binary = bin, log_file = log })
local host = require("fido.host")
host.LOG_MAX_BYTES = 3000
assert(host.start())`, bin, logPath)
	n.WaitFor(t, fmt.Sprintf(`(function()
  local f = io.open(%q)
  local s = f and f:read("*a") or ""
  if f then f:close() end
  return s:find("host exited", 1, true) ~= nil
end)()`, logPath), 10*time.Second)

	cur, err := os.ReadFile(logPath)
	require.NoError(t, err)
	prev, err := os.ReadFile(logPath + ".1")
	require.NoError(t, err, "a full log becomes fido.log.1")
	assert.LessOrEqual(t, len(cur), 3000+100, "the log stays under the limit (one line over at most)")
	assert.LessOrEqual(t, len(prev), 3000+100, "rotated while the host wrote, not only at its start")
	assert.Contains(t, string(prev), "one line in two pieces\n", "a line in two pieces is logged whole")
	assert.NotContains(t, string(prev), "an old line", "the earlier session's log was rotated away first")
	both := string(prev) + string(cur)
	assert.Contains(t, both, "line 99: the host writes enough to fill the log\n")
	assert.Contains(t, string(cur), "last words without a newline\n", "a last unfinished line is logged at exit")
	assert.Contains(t, string(cur), "--- host exited with code 0")
	for _, l := range strings.Split(strings.TrimSpace(both), "\n") {
		assert.NotEqual(t, "one line in ", l, "a line in two pieces is one line")
		assert.NotEqual(t, "two pieces", l, "a line in two pieces is one line")
	}
}
