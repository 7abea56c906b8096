// Package js is the javascript_execute tool: JavaScript snippets run in a
// fresh goja runtime (github.com/dop251/goja, with the regexp2 engine)
// inside a worker process of their own, `bin/fido js-worker` (RunWorker),
// so nothing a snippet does can take the host down. The host side
// (JSTool, host.go) keeps one spare worker started, sends it the snippet and
// kills it past the time limit; the worker side (worker.go, runtime.go,
// fetch.go) limits its own memory, sets the process-wide regexp match
// timeout, and offers console, require (files inside the workspace only)
// and fetch (only after the user or a rule allowed the network).
//
// It imports the tool contract (tools), the workspace (its sandbox
// resolves require), the permission rules and secret (the worker's
// environment is scrubbed). Only the composition root (cmd/fido) and the
// benchmark import it: goja, regexp2 and net/http stay out of every other
// package's build.
package js
