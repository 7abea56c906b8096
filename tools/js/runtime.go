package js

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/text"
	"github.com/fido-nvim/fido/tools/workspace"
)

// jsOutcome is what the runtime goroutine reports.
type jsOutcome struct {
	result       json.RawMessage
	resultString *string
	resultNote   string
	err          *jsError
	stopped      bool   // an interrupt ended the run
	stack        string // where it was when stopped
}

// jsRun is one call's runtime and event loop. Everything except the fields
// marked otherwise belongs to the runtime goroutine.
type jsRun struct {
	tool       *jsEngine
	ctx        context.Context // ends with the call; fetches use it
	network    bool
	offlineWhy string
	console    *jsConsole // shared with the watchdog

	vm      *goja.Runtime
	errCtor goja.Value
	strFn   goja.Callable
	jsonStr goja.Callable
	jsonPar goja.Callable

	// Event loop. queue and wake are shared; pending and timers are not.
	mu        sync.Mutex
	queue     []func() error
	wake      chan struct{}
	stop      chan struct{}
	stopOnce  sync.Once
	pending   int
	timers    map[int64]*jsTimer
	nextTimer int64
	allTimers []*time.Timer // shared (stopTimers runs on the watchdog side)

	// Promises rejected with no handler, in order; reported as console
	// errors at the end unless a handler was attached later.
	rejected      []*goja.Promise
	resultPromise *goja.Promise

	heapBase uint64     // the heap before the run (jsHeapBytes); shared, read-only
	rangeErr goja.Value // RangeError, as the runtime had it before the snippet ran

	modules     map[string]*goja.Object // resolved absolute path → module
	moduleBytes int
	fetches     int
}

type jsTimer struct {
	fn     goja.Callable
	args   []goja.Value
	delay  time.Duration
	repeat bool
	t      *time.Timer
}

var errJSStopped = errors.New("stopped")

func newJSRun(t *jsEngine, ctx context.Context, network bool, offlineWhy string) *jsRun {
	return &jsRun{
		tool: t, ctx: ctx, network: network, offlineWhy: offlineWhy,
		console:  &jsConsole{kept: t.onConsole},
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		timers:   map[int64]*jsTimer{},
		modules:  map[string]*goja.Object{},
		heapBase: jsHeapBytes(),
	}
}

// heapGrowth is how much the heap grew since the run began, plus more bytes
// about to be allocated. Safe from any goroutine.
func (r *jsRun) heapGrowth(more uint64) uint64 {
	h := jsHeapBytes() + more
	if h <= r.heapBase {
		return 0
	}
	return h - r.heapBase
}

// jsAllocGuard wraps the builtins that allocate as much as their argument
// says (ArrayBuffer, the typed arrays, String.prototype.repeat): each asks
// reserve first, which refuses an allocation that would take the heap past
// the run's limit. Without it a loop of large buffers outruns the heap
// poll (an untouched buffer costs no time to allocate) and reaches the
// worker's OS memory ceiling, where the Go runtime may die anywhere: a
// failed thread start, or a nil span queue in the garbage collector
// (SIGSEGV) instead of its out-of-memory report. Prototype, species and
// instanceof keep working: the globals become proxies of the originals.
const jsAllocGuard = `(function (reserve) {
  const define = (o, k, v) => Object.defineProperty(o, k, { value: v, writable: true, configurable: true, enumerable: false });
  const guard = (C, bytes) => {
    const has = (o) => o instanceof C; // goja's instanceof takes no proxy on its right
    const P = new Proxy(C, {
      construct(t, args, nt) { reserve(bytes(args)); return Reflect.construct(t, args, nt === P ? t : nt); },
      get(t, k, rcv) { return k === Symbol.hasInstance ? has : Reflect.get(t, k, rcv); },
    });
    define(C.prototype, "constructor", P);
    define(globalThis, C.name, P);
  };
  guard(ArrayBuffer, (a) => Number(a[0]) || 0);
  for (const C of [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array,
      Float32Array, Float64Array, BigInt64Array, BigUint64Array]) {
    guard(C, (a) => {
      const x = a[0];
      const n = typeof x === "number" ? x : (Array.isArray(x) || ArrayBuffer.isView(x)) ? x.length : 0;
      return (Number(n) || 0) * C.BYTES_PER_ELEMENT;
    });
  }
  const repeat = String.prototype.repeat;
  define(String.prototype, "repeat", {
    repeat(count) {
      if (this != null) reserve(String(this).length * 2 * (Number(count) || 0));
      return repeat.call(this, count);
    },
  }.repeat);
})`

// guardAllocations installs jsAllocGuard; reserve throws the RangeError.
func (r *jsRun) guardAllocations() error {
	fn, err := r.vm.RunString(jsAllocGuard)
	if err != nil {
		return err
	}
	install, ok := goja.AssertFunction(fn)
	if !ok {
		return errors.New("the allocation guard is not a function")
	}
	limit := r.tool.memLimit
	reserve := func(call goja.FunctionCall) goja.Value {
		n := call.Argument(0).ToFloat()
		if n > 0 && (n >= float64(limit) || r.heapGrowth(uint64(n)) > limit) {
			msg := fmt.Sprintf("out of memory: the heap grew by more than %d MiB with an allocation of %s, which was refused",
				limit>>20, jsSize(n))
			if obj, err := r.vm.New(r.rangeErr, r.vm.ToValue(msg)); err == nil {
				panic(obj)
			}
			panic(r.vm.NewGoError(errors.New(msg)))
		}
		return goja.Undefined()
	}
	_, err = install(goja.Undefined(), r.vm.ToValue(reserve))
	return err
}

// jsSize words a byte count for an error message.
func jsSize(n float64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.0f GiB", n/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", n/(1<<20))
	}
	return fmt.Sprintf("%.0f bytes", n)
}

// halt interrupts the runtime and the event loop. Safe from any goroutine.
func (r *jsRun) halt(why jsStop) {
	r.stopOnce.Do(func() {
		r.mu.Lock()
		vm := r.vm
		r.mu.Unlock()
		if vm != nil {
			vm.Interrupt(why)
		}
		close(r.stop)
	})
}

// stopTimers cancels every timer of the run. Safe from any goroutine.
func (r *jsRun) stopTimers() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.allTimers {
		t.Stop()
	}
}

// post queues a job for the runtime goroutine. Safe from any goroutine.
func (r *jsRun) post(job func() error) {
	r.mu.Lock()
	r.queue = append(r.queue, job)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *jsRun) isStopped() bool {
	select {
	case <-r.stop:
		return true
	default:
		return false
	}
}

// execute runs the snippet and its event loop and reports on done.
func (r *jsRun) execute(code string, done chan<- jsOutcome) {
	var out jsOutcome
	defer func() {
		if p := recover(); p != nil {
			var ie *goja.InterruptedError
			if e, ok := p.(error); ok && errors.As(e, &ie) {
				out = jsOutcome{stopped: true}
			} else {
				_, _ = fmt.Fprintf(tools.PanicLog(), "javascript_execute panic: %v\n%s\n", p, debug.Stack())
				out = jsOutcome{err: &jsError{Name: "InternalError", Message: fmt.Sprintf("javascript_execute failed with an internal error: %v", p)}}
			}
		}
		done <- out
	}()
	out = r.executeInner(code)
	if !out.stopped && r.vm != nil {
		r.reportUnhandled()
	}
}

// reportUnhandled logs rejections nobody handled, as Node would.
func (r *jsRun) reportUnhandled() {
	for _, p := range r.rejected {
		if p == nil || p == r.resultPromise {
			continue
		}
		d := r.describeValue(p.Result(), "")
		r.console.add("error", "Uncaught (in promise) "+d.Name+": "+d.Message)
	}
}

func (r *jsRun) executeInner(code string) jsOutcome {
	vm := goja.New()
	r.mu.Lock()
	r.vm = vm
	r.mu.Unlock()
	if r.isStopped() { // halted before the runtime existed
		return jsOutcome{stopped: true}
	}
	vm.SetMaxCallStackSize(jsMaxCallStack)
	vm.SetPromiseRejectionTracker(func(p *goja.Promise, op goja.PromiseRejectionOperation) {
		if op == goja.PromiseRejectionReject {
			r.rejected = append(r.rejected, p)
			return
		}
		for i, q := range r.rejected {
			if q == p {
				r.rejected[i] = nil
			}
		}
	})
	if err := r.setup(); err != nil {
		return jsOutcome{err: &jsError{Name: "InternalError", Message: err.Error()}}
	}

	prg, err := jsCompileMain(code)
	if err != nil {
		return jsOutcome{err: r.describe(err)}
	}
	module := vm.NewObject()
	exports := vm.NewObject()
	_ = module.Set("exports", exports)
	_ = module.Set("id", ".")
	g := vm.GlobalObject()
	_ = g.Set("module", module)
	_ = g.Set("exports", exports)
	_ = g.Set("require", r.requireFunc("."))
	_ = g.Set("__filename", "<snippet>")
	_ = g.Set("__dirname", ".")

	completion, err := vm.RunProgram(prg)
	if err != nil {
		return r.failure(err)
	}
	value := completion
	if ex := module.Get("exports"); ex != exports || len(exports.Keys()) > 0 {
		value = ex
	}
	if obj, ok := value.(*goja.Object); ok {
		if p, ok := obj.Export().(*goja.Promise); ok {
			r.resultPromise = p
			if err := r.loop(func() bool { return p.State() != goja.PromiseStatePending }); err != nil {
				return r.failure(err)
			}
			switch p.State() {
			case goja.PromiseStatePending:
				return jsOutcome{err: &jsError{Name: "Error", Message: "the result is a Promise that never settled: nothing was left to wait for (no timers or fetches pending)"}}
			case goja.PromiseStateRejected:
				return jsOutcome{err: r.describeValue(p.Result(), "")}
			}
			value = p.Result()
			return r.serialize(value)
		}
	}
	if err := r.loop(func() bool { return false }); err != nil {
		out := r.failure(err)
		if !out.stopped {
			res := r.serialize(value)
			out.result, out.resultString, out.resultNote = res.result, res.resultString, res.resultNote
		}
		return out
	}
	return r.serialize(value)
}

// jsCompileMain compiles the snippet as a script, so the last expression
// statement is its value. A snippet using top-level await or return runs as
// the body of an async function instead.
func jsCompileMain(code string) (*goja.Program, error) {
	prg, err := goja.Compile("snippet.js", code, false)
	if err == nil {
		return prg, nil
	}
	var se *goja.CompilerSyntaxError
	if errors.As(err, &se) && (strings.Contains(code, "await") || strings.Contains(code, "return")) {
		if p2, err2 := goja.Compile("snippet.js", "(async () => {"+code+"\n})()", false); err2 == nil {
			return p2, nil
		}
	}
	return nil, err
}

// setup installs console, timers and fetch and captures the builtins the
// host itself uses, before the snippet can replace them.
func (r *jsRun) setup() error {
	vm := r.vm
	g := vm.GlobalObject()
	r.errCtor = g.Get("Error")
	r.rangeErr = g.Get("RangeError")
	if err := r.guardAllocations(); err != nil {
		return fmt.Errorf("allocation guard: %w", err)
	}
	var ok bool
	if r.strFn, ok = goja.AssertFunction(g.Get("String")); !ok {
		return errors.New("String is not a function")
	}
	jsonObj := g.Get("JSON").ToObject(vm)
	if r.jsonStr, ok = goja.AssertFunction(jsonObj.Get("stringify")); !ok {
		return errors.New("JSON.stringify is not a function")
	}
	if r.jsonPar, ok = goja.AssertFunction(jsonObj.Get("parse")); !ok {
		return errors.New("JSON.parse is not a function")
	}

	console := vm.NewObject()
	for _, lv := range []struct{ name, level string }{
		{"log", "log"}, {"info", "info"}, {"warn", "warn"}, {"error", "error"}, {"debug", "debug"}, {"dir", "log"}, {"trace", "debug"},
	} {
		level := lv.level
		_ = console.Set(lv.name, func(call goja.FunctionCall) goja.Value {
			r.console.add(level, r.format(call.Arguments))
			return goja.Undefined()
		})
	}
	_ = g.Set("console", console)

	_ = g.Set("setTimeout", func(call goja.FunctionCall) goja.Value { return r.setTimer(call, false) })
	_ = g.Set("setInterval", func(call goja.FunctionCall) goja.Value { return r.setTimer(call, true) })
	clear := func(call goja.FunctionCall) goja.Value {
		r.clearTimer(call.Argument(0).ToInteger())
		return goja.Undefined()
	}
	_ = g.Set("clearTimeout", clear)
	_ = g.Set("clearInterval", clear)
	_ = g.Set("queueMicrotask", func(call goja.FunctionCall) goja.Value {
		fn, ok := goja.AssertFunction(call.Argument(0))
		if !ok {
			panic(vm.NewTypeError("queueMicrotask: the argument must be a function"))
		}
		p, resolve, _ := vm.NewPromise()
		then, _ := goja.AssertFunction(vm.ToValue(p).ToObject(vm).Get("then"))
		if _, err := then(vm.ToValue(p), vm.ToValue(func(goja.FunctionCall) goja.Value {
			if _, err := fn(goja.Undefined()); err != nil {
				panic(err)
			}
			return goja.Undefined()
		})); err != nil {
			panic(err)
		}
		if err := resolve(goja.Undefined()); err != nil {
			panic(err)
		}
		return goja.Undefined()
	})
	_ = g.Set("fetch", r.fetchFunc())
	return nil
}

// throw raises a plain Error with msg inside the runtime.
func (r *jsRun) throw(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	obj, err := r.vm.New(r.errCtor, r.vm.ToValue(msg))
	if err != nil {
		panic(r.vm.NewGoError(errors.New(msg)))
	}
	panic(obj)
}

// loop runs queued jobs until settled reports true, nothing is pending, or
// the run is halted.
func (r *jsRun) loop(settled func() bool) error {
	for !settled() && r.pending > 0 {
		select {
		case <-r.stop:
			return errJSStopped
		case <-r.wake:
		}
		for {
			r.mu.Lock()
			jobs := r.queue
			r.queue = nil
			r.mu.Unlock()
			if len(jobs) == 0 {
				break
			}
			for _, job := range jobs {
				if r.isStopped() {
					return errJSStopped
				}
				if err := job(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (r *jsRun) setTimer(call goja.FunctionCall, repeat bool) goja.Value {
	fn, ok := goja.AssertFunction(call.Argument(0))
	if !ok {
		panic(r.vm.NewTypeError("setTimeout/setInterval: the first argument must be a function"))
	}
	ms := call.Argument(1).ToInteger()
	if ms < 1 {
		ms = 1
	}
	var args []goja.Value
	if len(call.Arguments) > 2 {
		args = append(args, call.Arguments[2:]...)
	}
	r.nextTimer++
	id := r.nextTimer
	tm := &jsTimer{fn: fn, args: args, delay: time.Duration(ms) * time.Millisecond, repeat: repeat}
	r.timers[id] = tm
	r.pending++
	r.arm(id, tm)
	return r.vm.ToValue(id)
}

func (r *jsRun) arm(id int64, tm *jsTimer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tm.t = time.AfterFunc(tm.delay, func() { r.post(func() error { return r.fire(id) }) })
	r.allTimers = append(r.allTimers, tm.t)
}

func (r *jsRun) fire(id int64) error {
	tm, ok := r.timers[id]
	if !ok {
		return nil // cleared after it fired
	}
	if tm.repeat {
		r.arm(id, tm)
	} else {
		delete(r.timers, id)
		r.pending--
	}
	_, err := tm.fn(goja.Undefined(), tm.args...)
	return err
}

func (r *jsRun) clearTimer(id int64) {
	if tm, ok := r.timers[id]; ok {
		tm.t.Stop()
		delete(r.timers, id)
		r.pending--
	}
}

// failure turns an error from the runtime into an outcome.
func (r *jsRun) failure(err error) jsOutcome {
	var ie *goja.InterruptedError
	if errors.Is(err, errJSStopped) {
		return jsOutcome{stopped: true}
	}
	if errors.As(err, &ie) {
		return jsOutcome{stopped: true, stack: jsCapStack(ie.String())}
	}
	return jsOutcome{err: r.describe(err)}
}

// describe turns a compile error or exception into {name, message, stack}.
func (r *jsRun) describe(err error) *jsError {
	var se *goja.CompilerSyntaxError
	var so *goja.StackOverflowError
	var ex *goja.Exception
	switch {
	case errors.As(err, &se):
		return &jsError{Name: "SyntaxError", Message: strings.TrimPrefix(se.Error(), "SyntaxError: ")}
	case errors.As(err, &so):
		return &jsError{Name: "RangeError", Message: fmt.Sprintf("Maximum call stack size exceeded (%d frames)", jsMaxCallStack), Stack: jsCapStack(so.String())}
	case errors.As(err, &ex):
		return r.describeValue(ex.Value(), ex.String())
	}
	return &jsError{Name: "Error", Message: err.Error()}
}

// describeValue describes a thrown or rejected value. fallbackStack is the
// runtime's own trace, used when the value has no stack property.
func (r *jsRun) describeValue(v goja.Value, fallbackStack string) *jsError {
	e := &jsError{Name: "Uncaught", Message: "undefined"}
	if v == nil {
		return e
	}
	obj, isObj := v.(*goja.Object)
	if !isObj {
		e.Message = r.str(v)
		return e
	}
	// Reading properties can run getters: do it under Try.
	if ex := r.vm.Try(func() {
		if n := obj.Get("name"); n != nil && !goja.IsUndefined(n) {
			e.Name = n.String()
		}
		if m := obj.Get("message"); m != nil && !goja.IsUndefined(m) {
			e.Message = m.String()
		} else {
			e.Message = r.str(v)
		}
		if s := obj.Get("stack"); s != nil && !goja.IsUndefined(s) {
			e.Stack = s.String()
		}
	}); ex != nil {
		e.Message = r.str(v)
	}
	if e.Stack == "" {
		e.Stack = fallbackStack
	}
	e.Stack = jsCapStack(e.Stack)
	return e
}

// jsCapStack collapses repeated frames (deep recursion) and keeps at most
// jsMaxStackLines lines.
func jsCapStack(s string) string {
	var lines []string
	in := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := 0; i < len(in); {
		j := i + 1
		for j < len(in) && in[j] == in[i] {
			j++
		}
		lines = append(lines, in[i])
		if n := j - i - 1; n > 0 {
			lines = append(lines, fmt.Sprintf("\t… the frame above repeats %d more times", n))
		}
		i = j
	}
	if len(lines) > jsMaxStackLines {
		lines = append(lines[:jsMaxStackLines:jsMaxStackLines], fmt.Sprintf("\t… %d more lines", len(lines)-jsMaxStackLines))
	}
	return text.Shorten(strings.Join(lines, "\n"), 4000)
}

// str is String(v), never throwing to the caller (uncatchable errors propagate).
func (r *jsRun) str(v goja.Value) string {
	s, err := r.strFn(goja.Undefined(), v)
	if err != nil {
		jsRethrowUncatchable(err)
		return "[value that cannot be converted to a string]"
	}
	return s.String()
}

// jsRethrowUncatchable lets interrupts and stack overflows keep unwinding
// when a host function called back into JS.
func jsRethrowUncatchable(err error) {
	var ie *goja.InterruptedError
	var so *goja.StackOverflowError
	if errors.As(err, &ie) {
		panic(ie)
	}
	if errors.As(err, &so) {
		panic(so)
	}
}

// stringify is JSON.stringify(v); ok is false when v has no JSON form.
func (r *jsRun) stringify(v goja.Value) (s string, ok bool, why string) {
	res, err := r.jsonStr(goja.Undefined(), v)
	if err != nil {
		jsRethrowUncatchable(err)
		var ex *goja.Exception
		if errors.As(err, &ex) {
			d := r.describeValue(ex.Value(), "")
			return "", false, d.Name + ": " + d.Message
		}
		return "", false, err.Error()
	}
	if res == nil || goja.IsUndefined(res) {
		return "", false, ""
	}
	return res.String(), true, ""
}

// serialize turns the result into JSON, or String(value) clearly marked.
func (r *jsRun) serialize(v goja.Value) (out jsOutcome) {
	if v == nil || goja.IsUndefined(v) {
		return out
	}
	s, ok, why := r.stringify(v)
	if !ok {
		str := r.str(v)
		kind := jsTypeOf(v)
		if why != "" {
			out.resultNote = fmt.Sprintf("the %s result is not JSON-serializable (%s); result_string is String(value)", kind, why)
		} else {
			out.resultNote = fmt.Sprintf("the %s result has no JSON form; result_string is String(value)", kind)
		}
		str = jsCut(str, jsMaxResult)
		out.resultString = &str
		return out
	}
	if len(s) > jsMaxResult {
		cut := jsCut(s, jsMaxResult)
		out.resultString = &cut
		out.resultNote = fmt.Sprintf("the result is %d bytes of JSON, over the %d KiB cap; result_string holds its start as text", len(s), jsMaxResult>>10)
		return out
	}
	out.result = json.RawMessage(s)
	return out
}

func jsTypeOf(v goja.Value) string {
	switch v := v.(type) {
	case *goja.Object:
		if _, fn := goja.AssertFunction(v); fn {
			return "function"
		}
		return "object"
	case *goja.Symbol:
		return "symbol"
	}
	if t := v.ExportType(); t != nil && t.String() == "*big.Int" {
		return "bigint"
	}
	return "primitive"
}

// jsCut cuts s to at most n bytes on a rune boundary, with a marker.
func jsCut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf(" … [cut: %d bytes in all]", len(s))
}

// format renders console arguments roughly as Node does: strings as they
// are, errors by their stack, functions by name, other objects as JSON.
func (r *jsRun) format(args []goja.Value) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		parts = append(parts, r.formatOne(a))
	}
	return strings.Join(parts, " ")
}

func (r *jsRun) formatOne(v goja.Value) string {
	obj, ok := v.(*goja.Object)
	if !ok {
		if v == nil {
			return "undefined"
		}
		return r.str(v)
	}
	if _, fn := goja.AssertFunction(obj); fn {
		name := ""
		_ = r.vm.Try(func() { name = obj.Get("name").String() })
		if name == "" {
			return "[Function (anonymous)]"
		}
		return "[Function: " + name + "]"
	}
	if r.isError(obj) {
		d := r.describeValue(obj, "")
		if d.Stack != "" && strings.Contains(d.Stack, d.Message) {
			return d.Stack
		}
		return d.Name + ": " + d.Message
	}
	if s, ok, _ := r.stringify(obj); ok {
		return s
	}
	return r.str(obj)
}

func (r *jsRun) isError(obj *goja.Object) bool {
	ctor, ok := r.errCtor.(*goja.Object)
	if !ok {
		return false
	}
	is := false
	_ = r.vm.Try(func() { is = obj.Get("stack") != nil && r.vm.InstanceOf(obj, ctor) })
	return is
}

// jsConsole collects console lines within the caps. Shared with the watchdog.
type jsConsole struct {
	mu      sync.Mutex
	lines   []jsConsoleLine
	bytes   int
	dropped int
	// kept, when set, is told of every line kept, as it is kept: the worker
	// streams them to the host so that they survive a crash of the worker.
	kept func(jsConsoleLine)
}

func (c *jsConsole) add(level, text string) {
	text = jsCut(text, jsMaxLine)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped > 0 || c.bytes+len(text) > jsMaxConsole {
		c.dropped++
		return
	}
	c.bytes += len(text)
	line := jsConsoleLine{Level: level, Text: text}
	c.lines = append(c.lines, line)
	if c.kept != nil {
		c.kept(line)
	}
}

func (c *jsConsole) snapshot() ([]jsConsoleLine, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]jsConsoleLine(nil), c.lines...), c.dropped
}

// jsNodeBuiltins are names require refuses with a pointed message.
var jsNodeBuiltins = map[string]bool{
	"assert": true, "buffer": true, "child_process": true, "cluster": true, "crypto": true, "dgram": true,
	"dns": true, "events": true, "fs": true, "fs/promises": true, "http": true, "http2": true, "https": true,
	"module": true, "net": true, "os": true, "path": true, "perf_hooks": true, "process": true,
	"querystring": true, "readline": true, "stream": true, "string_decoder": true, "timers": true,
	"tls": true, "tty": true, "url": true, "util": true, "v8": true, "vm": true, "worker_threads": true, "zlib": true,
}

// requireFunc is require for a module in dir (workspace-relative, slash form).
func (r *jsRun) requireFunc(dir string) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		arg := call.Argument(0)
		if _, ok := arg.Export().(string); !ok {
			panic(r.vm.NewTypeError("require: the argument must be a string path such as ./lib/x.js"))
		}
		return r.require(dir, arg.String())
	}
}

func (r *jsRun) require(dir, spec string) goja.Value {
	switch {
	case strings.HasPrefix(spec, "node:") || jsNodeBuiltins[spec]:
		r.throw("require(%q): built-in Node modules are not available in javascript_execute (no fs, path, child_process, http, ...); only workspace .js and .json files can be required, by relative path", spec)
	case strings.HasPrefix(spec, "/") || strings.HasPrefix(spec, `\`) || (len(spec) > 1 && spec[1] == ':'):
		r.throw("require(%q): absolute paths are not allowed; require workspace files by a path relative to the workspace root, such as ./lib/x.js", spec)
	case !strings.HasPrefix(spec, "./") && !strings.HasPrefix(spec, "../") && spec != "." && spec != "..":
		r.throw("require(%q): packages are not available (no node_modules); require workspace files by a path starting with ./ or ../, such as ./lib/x.js", spec)
	}
	rel := path.Join(dir, spec)
	candidates := []string{rel}
	switch path.Ext(rel) {
	case ".js", ".json":
	default:
		candidates = []string{rel + ".js", rel + ".json", rel + "/index.js", rel + "/index.json"}
		if spec == "." || spec == ".." || strings.HasSuffix(spec, "/") {
			candidates = candidates[2:]
		}
	}
	for _, c := range candidates {
		abs, err := r.tool.ws.Sandbox.Resolve(c)
		if err != nil {
			r.throw("require(%q): %v", spec, err)
		}
		fi, err := r.tool.ws.Sandbox.Stat(abs)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if m, ok := r.modules[abs]; ok {
			return m.Get("exports")
		}
		return r.load(spec, abs, fi.Size())
	}
	if e := path.Ext(rel); e != "" && e != ".js" && e != ".json" {
		r.throw("require(%q): only .js and .json files can be required", spec)
	}
	r.throw("require(%q): no such workspace file (tried %s)", spec, strings.Join(candidates, ", "))
	return nil
}

func (r *jsRun) load(spec, abs string, size int64) goja.Value {
	rel := r.tool.ws.Sandbox.Rel(abs)
	if size > jsMaxModule {
		r.throw("require(%q): %s is %d bytes; at most %d bytes can be required", spec, rel, size, jsMaxModule)
	}
	if r.moduleBytes+int(size) > jsMaxModules {
		r.throw("require(%q): this run has already required %d bytes; at most %d bytes in all", spec, r.moduleBytes, jsMaxModules)
	}
	data, err := r.tool.ws.Sandbox.ReadFile(abs, jsMaxModule)
	if err != nil {
		r.throw("require(%q): %s", spec, workspace.ErrorText(r.tool.ws, abs, err))
	}
	r.moduleBytes += len(data)
	vm := r.vm
	module := vm.NewObject()
	exports := vm.NewObject()
	_ = module.Set("exports", exports)
	_ = module.Set("id", rel)
	_ = module.Set("filename", rel)
	r.modules[abs] = module

	if path.Ext(abs) == ".json" {
		v, err := r.jsonPar(goja.Undefined(), vm.ToValue(string(data)))
		if err != nil {
			delete(r.modules, abs)
			jsRethrowUncatchable(err)
			d := r.describe(err)
			r.throw("require(%q): %s is not valid JSON: %s", spec, rel, d.Message)
		}
		_ = module.Set("exports", v)
		return v
	}
	prg, err := goja.Compile(rel, "(function (exports, require, module, __filename, __dirname) {"+string(data)+"\n})", false)
	if err != nil {
		delete(r.modules, abs)
		r.throw("require(%q): %v", spec, err)
	}
	wrapper, err := vm.RunProgram(prg)
	if err != nil {
		delete(r.modules, abs)
		panic(err)
	}
	fn, ok := goja.AssertFunction(wrapper)
	if !ok {
		r.throw("require(%q): internal error: module wrapper is not a function", spec)
	}
	dir := path.Dir(rel)
	if _, err := fn(exports, exports, vm.ToValue(r.requireFunc(dir)), module, vm.ToValue(rel), vm.ToValue(dir)); err != nil {
		delete(r.modules, abs)
		panic(err)
	}
	return module.Get("exports")
}
