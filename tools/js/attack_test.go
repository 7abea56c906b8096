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

// A loop of large buffers is refused at the allocation that would pass the
// limit, every time: it never reaches the worker's OS ceiling, where the Go
// runtime could die anywhere (a SIGSEGV in the garbage collector, a thread
// it could not start) instead of reporting the out-of-memory error.
func TestJSExecBufferLoopIsRefusedBeforeTheOSLimit(t *testing.T) {
	tool := jsTool(t, nil, nil)
	tool.memLimit = 64 << 20
	for i := 0; i < 12; i++ {
		for _, code := range []string{
			`const a = []; for (;;) a.push(new ArrayBuffer(32 << 20))`,
			`const a = []; for (;;) a.push(new Float64Array(4 << 20))`,
		} {
			res, out := jsRunCall(t, tool, map[string]any{"code": code, "timeout": 8000})
			require.NotNil(t, out.Error, res.Content)
			assert.Equal(t, "RangeError", out.Error.Name, res.Content)
			assert.Contains(t, out.Error.Message, "the heap grew by more than 64 MiB with an allocation of 32 MiB, which was refused")
		}
	}
}

// The guarded builtins behave as before: constructors, instanceof, species,
// subclasses, and a refused allocation is a RangeError the snippet can catch.
func TestJSExecGuardedBuiltinsBehave(t *testing.T) {
	tool := jsTool(t, nil, nil)
	tool.memLimit = 64 << 20
	_, out := jsRunCall(t, tool, map[string]any{"code": `
class Big extends Uint8Array {}
const u = new Uint8Array([1, 2, 3]);
const b = new Big(2);
let caught = "";
try { new ArrayBuffer(2 ** 40) } catch (e) { caught = e.name }
({
  instance: u instanceof Uint8Array && new ArrayBuffer(8) instanceof ArrayBuffer,
  ctor: u.constructor === Uint8Array && u.slice(1).constructor === Uint8Array,
  sub: b instanceof Big && b instanceof Uint8Array && b.map(x => x).constructor === Big,
  view: ArrayBuffer.isView(new DataView(new ArrayBuffer(4))) && new Int16Array(new ArrayBuffer(8)).length === 4,
  copy: Array.from(new Float32Array(u)).join(","),
  repeat: "ab".repeat(3),
  name: Uint8Array.name + " " + ArrayBuffer.BYTES_PER_ELEMENT + " " + Uint8Array.BYTES_PER_ELEMENT,
  caught,
})`})
	require.Nil(t, out.Error)
	assert.JSONEq(t, `{"instance":true,"ctor":true,"sub":true,"view":true,"copy":"1,2,3","repeat":"ababab",
		"name":"Uint8Array undefined 1","caught":"RangeError"}`, string(out.Result))
}
