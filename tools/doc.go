// Package tools is the tool contract every other package builds on, and
// nothing else: the Tool interface with its Access classes, Result and the
// error results (ErrorResult, CodedErrorResult), the Registry (stable
// order, frozen specs, interceptors) whose Invoke applies the invocation
// guard (identity and delegation depth: subagents and plan mode get
// read-only tools only, and a ReadOnlyCapable tool — bash_exec in a
// read-only OS sandbox — where it can confine itself), checks the
// arguments are JSON, recovers panics and passes every result through the
// redactor the composition root set (SetRedactor: tools/secret's key
// redaction in the host); the Invocation a call carries (who calls, the
// conversation's FileTracker, its EditGate); and what tools need from the
// editor hosting them: Editor, Prompter, Question and Asker, EditGate with
// EditProposal, and the LanguageServers capability with its query and
// diagnostics types.
//
// A tool is declared once, with Define (define.go): its name, access,
// contract, transcript line and a run function over its typed params. The
// adapter decodes the arguments strictly (DecodeArgs), calls the params'
// Validate, and names the tool in front of every error result, so a tool
// writes only its sentence. Every built-in tool is one; a tool with state
// of its own (bash_exec's approval lock, javascript_execute's spare worker,
// delegate's busy flag) embeds the Declared value in its type. Each tool
// package builds its tools one way: Tools(deps) for a set (files, lsp,
// web), New…Tool(deps) for one.
//
// A tool's argument contract has one source (contract.go): its params struct,
// from which github.com/google/jsonschema-go generates the schema (properties
// in field order, required = fields without omitempty, descriptions from
// `jsonschema` tags), bounds given as the tool's Go constants, and its .md
// description, a text/template over the same constants. A Contract is built
// once, when the registry first lists its tool, so the catalog is the same
// bytes in every run and processes that list no tools do not pay for it;
// NewRegistry refuses a tool whose contract cannot be built. CheckContract,
// run over the real registry by cmd/fido's tests, fails when a schema, a
// description and a struct disagree.
//
// It imports nothing of Fido's but tools/text (string formatting, itself
// standard library only) and nothing outside the standard library but
// jsonschema-go, so every package may import it without linking an
// implementation. The implementations live
// in packages named for what they are:
//
//   - tools/workspace: the sandboxed workspace, undo log, revert and rewind,
//     diffs, atomic state files and state locks (no tools);
//   - tools/files: list_files, find_files, read_file, ripgrep, patch,
//     mkdir, rm, rmdir, with the walker, ignore rules and search engine;
//   - tools/shell: bash_exec and the reaping of its processes;
//   - tools/js: javascript_execute, its goja runtime and worker process;
//   - tools/web: websearch and browse_url (Tavily);
//   - tools/ask: ask_user and ask_an_expert;
//   - tools/lsp: the language-server tools; tools/mcp: MCP servers' tools;
//   - tools/permission: the command rules and their store;
//   - tools/sandbox: the OS sandbox for commands (Landlock, seccomp and a
//     supervisor on Linux, Seatbelt on macOS) and its `fido sandbox-exec` helper;
//   - tools/confined, tools/secret: confined file access, key redaction;
//   - tools/text: the shared formatters (shorten, collapse, first line,
//     durations, sizes, counts);
//   - tools/toolstest: a test workspace, fake editor and scripted prompter
//     for the tools' tests.
//
// Only the composition root (cmd/fido) assembles them: plan, agent and
// delegate import the contract, the workspace and the permission rules,
// never a tool implementation (cmd/fido's deps test keeps goja, regexp2 and
// net/http out of them).
package tools
