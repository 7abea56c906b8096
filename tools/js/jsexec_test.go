package js

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/text"
	"github.com/fido-nvim/fido/tools/toolstest"
)

// jsPrompter answers Select with a fixed choice and records the prompts.
type jsPrompter struct {
	mu      sync.Mutex
	choice  int
	err     error
	prompts []string
	items   [][]string
}

func (p *jsPrompter) Select(_ context.Context, prompt string, items []string) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prompts = append(p.prompts, prompt)
	p.items = append(p.items, items)
	return p.choice, p.err
}

func (p *jsPrompter) Input(context.Context, string, string) (string, bool, error) {
	return "", false, fmt.Errorf("unexpected Input")
}

func (p *jsPrompter) asked() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.prompts)
}

// jsOut is the decoded content of a javascript_execute result.
type jsOut struct {
	Result         json.RawMessage `json:"result"`
	ResultString   *string         `json:"result_string"`
	ResultNote     string          `json:"result_note"`
	Console        []jsConsoleLine `json:"console"`
	ConsoleDropped int             `json:"console_dropped"`
	Error          *jsError        `json:"error"`
	TimedOut       bool            `json:"timed_out"`
	Network        string          `json:"network"`
	NetworkNote    string          `json:"network_note"`
}

func jsTool(t testing.TB, files map[string]string, p tools.Prompter) *JSTool {
	t.Helper()
	ws, _ := toolstest.Workspace(t, files)
	tool := NewJSTool(ws, p)
	testJSWorker(t, tool)
	tool.Prewarm() // as the host does: calls do not wait for a process start
	tool.spareReady()
	t.Cleanup(tool.Close)
	return tool
}

// jsRunCall runs one call through a registry as the main agent and decodes it.
func jsRunCall(t testing.TB, tool *JSTool, args map[string]any) (tools.Result, jsOut) {
	t.Helper()
	reg, err := tools.NewRegistry(tool)
	require.NoError(t, err)
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	res := reg.Invoke(context.Background(), tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain}}, "javascript_execute", raw)
	var out jsOut
	require.NoError(t, json.Unmarshal([]byte(res.Content), &out), res.Content)
	return res, out
}

func TestJSExecValues(t *testing.T) {
	tool := jsTool(t, nil, nil)
	cases := []struct {
		name, code string
		want       string // result JSON
	}{
		{"last expression", `[1, 2, 3].map(x => x * 2)`, `[2,4,6]`},
		{"module.exports wins over the last expression", `module.exports = {a: 1, b: "x"}; 42`, `{"a":1,"b":"x"}`},
		{"exports property", `exports.n = 7; "ignored"`, `{"n":7}`},
		{"undefined is null", `var x = 1;`, `null`},
		{"resolved promise", `module.exports = Promise.resolve(5).then(x => x + 1)`, `6`},
		{"async with timers", `module.exports = (async () => { await new Promise(r => setTimeout(r, 20)); return "late" })()`, `"late"`},
		{"top-level await", `const v = await Promise.resolve(3); return v * 3`, `9`},
		{"timers run before a plain result is returned", `module.exports = {v: 0}; setTimeout(() => { module.exports.v = 2 }, 10)`, `{"v":2}`},
		{"ES2015+", `class A { #p = 1; get p() { return this.#p } }; const {p} = new A(); [p, ...new Set([1,1,2])]`, `[1,1,2]`},
		{"queueMicrotask order", `const s = []; queueMicrotask(() => s.push(2)); s.push(1); module.exports = Promise.resolve().then(() => s)`, `[1,2]`},
		{"regex features", `"2024-05-06".replace(/(?<y>\d+)-(?<m>\d+)-(?<d>\d+)/, "$<d>/$<m>/$<y>")`, `"06/05/2024"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, out := jsRunCall(t, tool, map[string]any{"code": c.code, "timeout": 2000})
			require.False(t, res.IsError, res.Content)
			assert.JSONEq(t, c.want, string(out.Result))
			assert.Nil(t, out.ResultString)
			assert.Equal(t, "offline", out.Network)
			assert.Regexp(t, `^ok( · \d+ log lines?)? · \d+ms$`, res.Summary)
		})
	}
}

func TestJSExecNonJSONResults(t *testing.T) {
	tool := jsTool(t, nil, nil)
	cases := []struct {
		name, code, wantString, wantNote string
	}{
		{"function", `module.exports = function add(a, b) { return a > b ? a : b }`, "function add(a, b) { return a > b ? a : b }", "function result has no JSON form"},
		{"cycle", `const o = {}; o.self = o; module.exports = o`, "[object Object]", "not JSON-serializable (TypeError"},
		{"bigint", `module.exports = 10n ** 20n`, "100000000000000000000", "bigint result is not JSON-serializable"},
		{"huge JSON", `module.exports = "x".repeat(100000)`, `"xxxx`, "over the 64 KiB cap"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, out := jsRunCall(t, tool, map[string]any{"code": c.code, "timeout": 2000})
			require.False(t, res.IsError, res.Content)
			assert.Equal(t, "null", string(out.Result))
			require.NotNil(t, out.ResultString, res.Content)
			assert.Contains(t, *out.ResultString, c.wantString)
			assert.Contains(t, out.ResultNote, c.wantNote)
			assert.LessOrEqual(t, len(*out.ResultString), jsMaxResult+100)
			assert.NotContains(t, res.Content, `\u003e`, "no HTML escaping of code")
		})
	}
}

func TestJSExecConsole(t *testing.T) {
	tool := jsTool(t, nil, nil)
	code := `
console.log("a", 1, {k: [1, 2]});
console.warn("w");
setTimeout(() => console.error("from timer"), 5);
Promise.resolve().then(() => console.info("micro"));
console.debug(null, undefined, true);
console.log(function named() {}, new TypeError("bad"));
`
	res, out := jsRunCall(t, tool, map[string]any{"code": code, "timeout": 2000})
	require.False(t, res.IsError, res.Content)
	require.Len(t, out.Console, 6, res.Content)
	want := []jsConsoleLine{
		{"log", `a 1 {"k":[1,2]}`},
		{"warn", "w"},
		{"debug", "null undefined true"},
	}
	assert.Equal(t, want, out.Console[:3])
	assert.True(t, strings.HasPrefix(out.Console[3].Text, "[Function: named] TypeError: bad"), out.Console[3].Text)
	assert.Equal(t, jsConsoleLine{"info", "micro"}, out.Console[4])
	assert.Equal(t, jsConsoleLine{"error", "from timer"}, out.Console[5])
	assert.Regexp(t, `^ok · 6 log lines · \d+ms$`, res.Summary)

	res, out = jsRunCall(t, tool, map[string]any{"code": `Promise.reject(new TypeError("lost")); Promise.reject(1).catch(() => {}); "v"`})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, []jsConsoleLine{{"error", "Uncaught (in promise) TypeError: lost"}}, out.Console)
}

func TestJSExecConsoleCaps(t *testing.T) {
	tool := jsTool(t, nil, nil)
	res, out := jsRunCall(t, tool, map[string]any{"code": `
console.log("y".repeat(20000));
for (let i = 0; i < 5000; i++) console.log("line " + i + " " + "z".repeat(50));
"done"`, "timeout": 3000})
	require.False(t, res.IsError, res.Content)
	assert.JSONEq(t, `"done"`, string(out.Result))
	require.NotEmpty(t, out.Console)
	assert.Contains(t, out.Console[0].Text, "… [cut: 20000 bytes in all]")
	assert.LessOrEqual(t, len(out.Console[0].Text), jsMaxLine+100)
	total := 0
	for _, l := range out.Console {
		total += len(l.Text)
	}
	assert.LessOrEqual(t, total, jsMaxConsole)
	assert.Equal(t, 5001, len(out.Console)+out.ConsoleDropped)
	assert.Positive(t, out.ConsoleDropped)
	assert.Equal(t, "line 0 "+strings.Repeat("z", 50), out.Console[1].Text)
}

func TestJSExecErrors(t *testing.T) {
	tool := jsTool(t, nil, nil)
	cases := []struct {
		name, code           string
		wantName, wantMsg    string
		wantStack            string
		wantConsoleLen       int
		wantSummaryHasPrefix string
	}{
		{"type error with stack", "console.log('before');\nfunction f() { return null.x }\nf()", "TypeError", "Cannot read property 'x'", "snippet.js:2", 1, "TypeError: "},
		{"thrown custom error", "class MyErr extends Error { constructor(m) { super(m); this.name = 'MyErr' } }\nthrow new MyErr('nope')", "MyErr", "nope", "snippet.js", 0, "MyErr: nope"},
		{"thrown string", `throw "plain"`, "Uncaught", "plain", "", 0, "Uncaught: plain"},
		{"rejected promise", `module.exports = (async () => { throw new RangeError("async bad") })()`, "RangeError", "async bad", "snippet.js", 0, "RangeError: async bad"},
		{"uncaught in a timer", `setTimeout(() => { throw new Error("in timer") }, 5); 1`, "Error", "in timer", "snippet.js", 0, "Error: in timer"},
		{"syntax error", `let x = ;`, "SyntaxError", "snippet.js: Line 1:9 Unexpected token", "", 0, "SyntaxError: snippet.js"},
		{"never settles", `module.exports = new Promise(() => {})`, "Error", "never settled", "", 0, "Error: the result is a Promise"},
		{"infinite recursion", `function r(n) { return r(n + 1) + 1 } r(0)`, "RangeError", "Maximum call stack size exceeded", "the frame above repeats", 0, "RangeError: Maximum call stack"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, out := jsRunCall(t, tool, map[string]any{"code": c.code, "timeout": 2000})
			require.True(t, res.IsError, res.Content)
			require.NotNil(t, out.Error, res.Content)
			assert.Equal(t, c.wantName, out.Error.Name)
			assert.Contains(t, out.Error.Message, c.wantMsg)
			if c.wantStack != "" {
				assert.Contains(t, out.Error.Stack, c.wantStack)
				assert.LessOrEqual(t, strings.Count(out.Error.Stack, "\n"), jsMaxStackLines)
			}
			assert.Len(t, out.Console, c.wantConsoleLen)
			assert.False(t, out.TimedOut)
			assert.True(t, strings.HasPrefix(res.Summary, c.wantSummaryHasPrefix), res.Summary)
		})
	}
}

func TestJSExecTimeouts(t *testing.T) {
	tool := jsTool(t, nil, nil)
	const timeout = 300 * time.Millisecond
	cases := []struct {
		name, code string
		maxTime    time.Duration
		killed     bool
	}{
		{"busy loop", `console.log("start"); while (true) {}`, timeout + 200*time.Millisecond, false},
		{"interval forever", `console.log("start"); setInterval(() => {}, 1)`, timeout + 200*time.Millisecond, false},
		{"pending promise with a long timer", `console.log("start"); module.exports = new Promise(r => setTimeout(r, 60000))`, timeout + 200*time.Millisecond, false},
		// Interrupt cannot reach into a regexp2 backtrack: the watchdog abandons it.
		{"catastrophic regex", `console.log("start"); /^(a+)+(?=b)/.test("a".repeat(40))`, timeout + jsKillGrace + 300*time.Millisecond, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tool.spareReady()
			start := time.Now()
			res, out := jsRunCall(t, tool, map[string]any{"code": c.code, "timeout": timeout.Milliseconds()})
			took := time.Since(start)
			require.True(t, res.IsError, res.Content)
			assert.True(t, out.TimedOut)
			require.NotNil(t, out.Error)
			assert.Equal(t, "TimeoutError", out.Error.Name)
			assert.GreaterOrEqual(t, took, timeout)
			assert.Less(t, took, c.maxTime)
			assert.Equal(t, []jsConsoleLine{{"log", "start"}}, out.Console, "console output before the stop is kept")
			if c.killed {
				assert.Contains(t, out.Error.Message, "killed after timeout (300ms)")
				assert.Equal(t, res.Summary, text.Shorten(out.Error.Message, 60))
			} else {
				assert.Equal(t, "timed out after 300ms", out.Error.Message)
				assert.Equal(t, "timed out after 300ms", res.Summary)
			}
		})
	}
}

func TestJSExecCancel(t *testing.T) {
	tool := jsTool(t, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := tool.Run(ctx, tools.Invocation{}, json.RawMessage(`{"code":"while(true){}","timeout":5000}`))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), time.Second)
}

func TestJSExecMemoryLimit(t *testing.T) {
	tool := jsTool(t, nil, nil)
	tool.memLimit = 16 << 20
	res, out := jsRunCall(t, tool, map[string]any{"code": `const keep = []; while (true) keep.push("x".repeat(4 << 20) + keep.length)`, "timeout": 5000})
	require.True(t, res.IsError, res.Content)
	require.NotNil(t, out.Error)
	assert.Equal(t, "RangeError", out.Error.Name)
	assert.Contains(t, out.Error.Message, "the heap grew by more than 16 MiB")
	assert.False(t, out.TimedOut)
}

func TestJSExecRequire(t *testing.T) {
	files := map[string]string{
		"lib/math.js":       "const h = require('./helper'); exports.double = x => h.twice(x); exports.dir = __dirname;",
		"lib/helper.js":     "module.exports = { twice: x => x * 2, file: __filename };",
		"lib/index.js":      "module.exports = 'index';",
		"data/config.json":  `{"name": "fido", "n": [1, 2]}`,
		"data/broken.json":  `{"name": `,
		"data/notes.txt":    "text",
		"lib/throws.js":     "\nthrow new Error('module failed')",
		"lib/cycle_a.js":    "exports.a = 1; const b = require('./cycle_b'); exports.fromB = b.b;",
		"lib/cycle_b.js":    "const a = require('./cycle_a'); exports.b = 'b saw a=' + a.a;",
		"lib/counter.js":    "globalThis.loads = (globalThis.loads || 0) + 1; module.exports = globalThis.loads;",
		"node_modules/x.js": "module.exports = 1",
	}
	tool := jsTool(t, files, nil)
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.js"), []byte("module.exports = 'secret'"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.js"), filepath.Join(tool.ws.Root, "lib", "link.js")))
	require.NoError(t, os.Symlink(outside, filepath.Join(tool.ws.Root, "outdir")))

	ok := []struct {
		name, code, want string
	}{
		{"js module with nested require", `const m = require("./lib/math.js"); [m.double(21), m.dir, require("./lib/helper").file]`, `[42, "lib", "lib/helper.js"]`},
		{"json file", `require("./data/config.json")`, `{"name":"fido","n":[1,2]}`},
		{"json without extension", `require("./data/config").name`, `"fido"`},
		{"directory index", `require("./lib")`, `"index"`},
		{"cycle", `require("./lib/cycle_a.js")`, `{"a":1,"fromB":"b saw a=1"}`},
		{"cached", `[require("./lib/counter"), require("./lib/counter.js"), require("./lib/../lib/counter")]`, `[1,1,1]`},
	}
	for _, c := range ok {
		t.Run(c.name, func(t *testing.T) {
			res, out := jsRunCall(t, tool, map[string]any{"code": c.code, "timeout": 2000})
			require.False(t, res.IsError, res.Content)
			assert.JSONEq(t, c.want, string(out.Result))
		})
	}

	refused := []struct {
		name, spec, want string
	}{
		{"parent escape", "../x.js", "leaves the workspace"},
		{"nested parent escape", "./lib/../../x.js", "leaves the workspace"},
		{"absolute path", filepath.Join(outside, "secret.js"), "absolute paths are not allowed"},
		{"symlink to a file outside", "./lib/link.js", "outside the workspace"},
		{"symlinked directory outside", "./outdir/secret", "outside the workspace"},
		{"fs", "fs", "built-in Node modules are not available"},
		{"child_process", "child_process", "built-in Node modules are not available"},
		{"node: prefix", "node:path", "built-in Node modules are not available"},
		{"package", "lodash", "packages are not available (no node_modules)"},
		{"node_modules by bare name", "x", "packages are not available"},
		{"missing", "./lib/nope", "no such workspace file (tried lib/nope.js, lib/nope.json, lib/nope/index.js, lib/nope/index.json)"},
		{"other extension", "./data/notes.txt", "only .js and .json files"},
		{"broken json", "./data/broken.json", "data/broken.json is not valid JSON"},
	}
	for _, c := range refused {
		t.Run("refuses "+c.name, func(t *testing.T) {
			code := fmt.Sprintf("try { require(%q); 'loaded' } catch (e) { [e.name, e.message] }", c.spec)
			res, out := jsRunCall(t, tool, map[string]any{"code": code, "timeout": 2000})
			require.False(t, res.IsError, res.Content)
			var got []string
			require.NoError(t, json.Unmarshal(out.Result, &got), res.Content)
			require.Len(t, got, 2, res.Content)
			assert.Contains(t, got[1], c.want)
			assert.NotContains(t, res.Content, "secret'")
		})
	}

	t.Run("error inside a module has its file in the stack", func(t *testing.T) {
		res, out := jsRunCall(t, tool, map[string]any{"code": `require("./lib/throws")`, "timeout": 2000})
		require.True(t, res.IsError)
		assert.Equal(t, "module failed", out.Error.Message)
		assert.Contains(t, out.Error.Stack, "lib/throws.js:2")
	})
}

func TestJSExecNoHostGlobals(t *testing.T) {
	tool := jsTool(t, nil, nil)
	res, out := jsRunCall(t, tool, map[string]any{"code": `[typeof process, typeof Buffer, typeof XMLHttpRequest, typeof WebSocket, typeof Deno, typeof __filename]`})
	require.False(t, res.IsError, res.Content)
	assert.JSONEq(t, `["undefined","undefined","undefined","undefined","undefined","string"]`, string(out.Result))
}

func TestJSExecArguments(t *testing.T) {
	tool := jsTool(t, nil, nil)
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"empty code", map[string]any{"code": "  "}, "code is required"},
		{"unknown argument", map[string]any{"code": "1", "cwd": "."}, `unknown argument "cwd"`},
		{"bad timeout", map[string]any{"code": "1", "timeout": 0}, "timeout must be at least 1 ms"},
		{"code too large", map[string]any{"code": strings.Repeat("1;", jsMaxCode)}, "at most 262144 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reg, err := tools.NewRegistry(tool)
			require.NoError(t, err)
			raw, _ := json.Marshal(c.args)
			res := reg.Invoke(context.Background(), tools.Invocation{}, "javascript_execute", raw)
			require.True(t, res.IsError)
			assert.Contains(t, res.Summary, c.want)
		})
	}
}

func TestJSExecNetwork(t *testing.T) {
	var gotMethod, gotBody, gotHeader string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		b, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/big":
			w.Write([]byte(strings.Repeat("b", jsMaxFetchBody+10)))
			return
		case "/slow":
			select {
			case <-r.Context().Done():
				return
			case <-time.After(5 * time.Second):
			}
		}
		gotMethod, gotBody, gotHeader = r.Method, string(b), r.Header.Get("X-Test")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		fmt.Fprintf(w, `{"path": %q, "ok": true}`, r.URL.Path)
	}))
	defer srv.Close()

	fetchCode := fmt.Sprintf(`module.exports = (async () => {
  const r = await fetch(%q + "/api", {method: "post", headers: {"X-Test": "yes"}, body: JSON.stringify({q: 1})});
  const j = await r.json();
  return {status: r.status, ok: r.ok, type: r.headers["content-type"], path: j.path};
})()`, srv.URL)

	t.Run("declined runs offline and fetch throws", func(t *testing.T) {
		p := &jsPrompter{choice: 1}
		tool := jsTool(t, nil, p)
		res, out := jsRunCall(t, tool, map[string]any{"code": `console.log("ran"); try { fetch("http://127.0.0.1/"); "no throw" } catch (e) { e.message }`, "allow_network": true})
		require.False(t, res.IsError, res.Content)
		assert.Equal(t, "offline", out.Network)
		assert.Contains(t, out.NetworkNote, "declined")
		assert.Contains(t, string(out.Result), "fetch is not available: network access is off for this run (the user declined network access")
		assert.Equal(t, []jsConsoleLine{{"log", "ran"}}, out.Console)
		require.Equal(t, 1, p.asked())
		assert.Equal(t, []string{"Allow network", "Run offline"}, p.items[0])
		assert.Contains(t, p.prompts[0], "localhost")
	})
	t.Run("dismissed prompt runs offline", func(t *testing.T) {
		p := &jsPrompter{choice: -1}
		_, out := jsRunCall(t, jsTool(t, nil, p), map[string]any{"code": fetchCode, "allow_network": true})
		assert.Equal(t, "offline", out.Network)
		require.NotNil(t, out.Error)
		assert.Contains(t, out.Error.Message, "fetch is not available")
	})
	t.Run("not requested: no prompt, fetch throws", func(t *testing.T) {
		p := &jsPrompter{choice: 0}
		res, out := jsRunCall(t, jsTool(t, nil, p), map[string]any{"code": fetchCode})
		require.True(t, res.IsError)
		assert.Zero(t, p.asked())
		assert.Contains(t, out.Error.Message, "allow_network was not set")
		assert.Empty(t, gotMethod, "no request reached the server")
	})
	t.Run("no prompter: offline", func(t *testing.T) {
		_, out := jsRunCall(t, jsTool(t, nil, nil), map[string]any{"code": "1", "allow_network": true})
		assert.Equal(t, "offline", out.Network)
		assert.Contains(t, out.NetworkNote, "no user to ask")
	})
	t.Run("approved fetch reaches the server", func(t *testing.T) {
		p := &jsPrompter{choice: 0}
		res, out := jsRunCall(t, jsTool(t, nil, p), map[string]any{"code": fetchCode, "allow_network": true, "timeout": 3000})
		require.False(t, res.IsError, res.Content)
		assert.Equal(t, "allowed", out.Network)
		assert.JSONEq(t, `{"status":201,"ok":true,"type":"application/json","path":"/api"}`, string(out.Result))
		mu.Lock()
		assert.Equal(t, "POST", gotMethod)
		assert.Equal(t, `{"q":1}`, gotBody)
		assert.Equal(t, "yes", gotHeader)
		mu.Unlock()
		assert.Contains(t, res.Summary, "network")
	})
	approvedErrors := []struct {
		name, code, want string
		timeout          int
	}{
		{"non-http scheme", `fetch("file:///etc/passwd")`, "only absolute http:// and https:// URLs", 2000},
		{"object body", fmt.Sprintf(`fetch(%q, {method: "POST", body: {a: 1}})`, srv.URL), "body must be a string", 2000},
		{"response too large", fmt.Sprintf(`module.exports = fetch(%q + "/big")`, srv.URL), "larger than 5 MiB", 8000},
		{"request ends with the run", fmt.Sprintf(`module.exports = fetch(%q + "/slow")`, srv.URL), "timed out after 300ms", 300},
	}
	for _, c := range approvedErrors {
		t.Run("approved: "+c.name, func(t *testing.T) {
			start := time.Now()
			res, out := jsRunCall(t, jsTool(t, nil, &jsPrompter{choice: 0}), map[string]any{"code": c.code, "allow_network": true, "timeout": c.timeout})
			require.True(t, res.IsError, res.Content)
			assert.Contains(t, out.Error.Message, c.want)
			assert.Less(t, time.Since(start), time.Duration(c.timeout)*time.Millisecond+time.Second)
		})
	}
}

func TestJSExecSubagentDenied(t *testing.T) {
	p := &jsPrompter{choice: 0}
	tool := jsTool(t, nil, p)
	reg, err := tools.NewRegistry(tool)
	require.NoError(t, err)
	res := reg.Invoke(context.Background(), tools.Invocation{DelegationDepth: 1}, "javascript_execute",
		json.RawMessage(`{"code":"console.log('x'); 1","allow_network":true}`))
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "permission_denied")
	assert.Zero(t, p.asked(), "a subagent call never prompts")
	assert.Equal(t, tools.Mutating, tool.Access())
}

func TestJSExecSpecAndSummaries(t *testing.T) {
	tool := jsTool(t, nil, nil)
	var schema map[string]any
	require.NoError(t, json.Unmarshal(tool.Parameters(), &schema))
	assert.Equal(t, false, schema["additionalProperties"])
	assert.Contains(t, tool.Description(), "localhost")
	assert.Contains(t, tool.Description(), "use patch")
	cases := []struct{ args, want string }{
		{`{"code":"1 + 1"}`, "1 + 1"},
		{`{"code":"const a = 1;\nconsole.log(a)"}`, "const a = 1; …"},
		{`{"code":"fetch(u)","allow_network":true}`, "fetch(u) (network)"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, tool.SummarizeCall(json.RawMessage(c.args)))
	}
}
