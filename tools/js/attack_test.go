package js

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A snippet that asks for more memory than exists ends its worker, never
// the host (this test process): the call returns a clear RangeError.
func TestJSExecHugeAllocationsNeverKillTheHost(t *testing.T) {
	tool := jsTool(t, nil, nil)
	tool.memLimit = 64 << 20 // the worker's OS ceiling is then 384 MiB
	for _, code := range []string{
		`new Uint8Array(Math.pow(2, 36))`,
		`new ArrayBuffer(2 ** 36)`,
		`'ab'.repeat(2 ** 35)`,
		`console.log("before"); const a = []; for (;;) a.push(new ArrayBuffer(32 << 20))`,
	} {
		t.Run(code, func(t *testing.T) {
			start := time.Now()
			res, out := jsRunCall(t, tool, map[string]any{"code": code, "timeout": 8000})
			require.True(t, res.IsError, res.Content)
			require.NotNil(t, out.Error, res.Content)
			assert.Equal(t, "RangeError", out.Error.Name, res.Content)
			assert.Regexp(t, `out of memory|heap grew|Invalid|invalid`, out.Error.Message)
			assert.Less(t, time.Since(start), 8*time.Second)
			if strings.HasPrefix(code, "console.log") {
				assert.Equal(t, []jsConsoleLine{{"log", "before"}}, out.Console, "console lines before the crash are kept")
			}
		})
	}
	// The host still runs snippets afterwards.
	_, out := jsRunCall(t, tool, map[string]any{"code": `1 + 1`})
	assert.JSONEq(t, `2`, string(out.Result))
}
