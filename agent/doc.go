// Package agent is the conversation core, independent of Neovim and of any
// model service. It links no HTTP client (its OpenRouter/OpenAI-compatible
// provider is agent/openrouter, chosen by cmd/fido) and talks to its front
// end only through the small interfaces of screen.go, so Neovim (package
// nvim), a headless ACP server or a test implements only what it has.
//
// # The session, by concern
//
// A Session holds one conversation at a time and coordinates these parts,
// each a type owning its state and its lock:
//
//	turnSlot   turn.go         the one running turn: running, cancel, generation,
//	                           draft, queued messages, turn state; begin/admit,
//	                           end, finish (compaction holds it like a turn)
//	history    history.go      the messages the model sees, the synthetic ones
//	                           waiting for the turn's end, the id, the turn count
//	convLog    convlog.go      the conversation's log (agent/conversation) and
//	                           what it last saved
//	editTrust  edits.go        the edit mode, the edit gate, the open review and
//	           review.go       the revert notes (rewind.go has its commands)
//	settings   settings.go     modes and models: approval mode, model and its
//	                           list, reasoning effort, context budget
//	meter      meter.go        usage totals, main and subagents
//	convTools  convtools.go    the conversation's tool registry (MCP catalog
//	                           fixed at its first request), nested AGENTS.md
//	commandTable cmdtable.go   every slash command as one row (SlashCommand):
//	                           /help, completion and dispatch read it
//
// Locks: the turn slot's is the outermost (a turn starting or ending and a
// conversation switching hold it, and take the others inside it); the
// others are leaves, except convLog's, which reads history and settings.
// No part refers to the Session.
//
// # Files, from the top down
//
// Every file uses only files below it (TestAgentFilesFormLayers):
//
//	session.go        NewSession and what front ends and the delegate call
//	commands.go       the built-in command rows and their general handlers;
//	conversations.go  /new, /sessions, /rename, /fork, resume and replay;
//	model.go          /model, /mode, /reasoning; permissions.go /permissions;
//	rewind.go         /rewind, /edits, :FidoReview; suspend.go /suspend, /recall
//	run.go            a turn: admit, prepare, run the loop, commit, cancel
//	summarize.go      compaction written by the model (/compact, over budget)
//	coordinator.go    SessionConfig, the Session's parts, helpers across them
//	(the parts above) turn.go history.go convlog.go edits.go review.go
//	                  settings.go meter.go convtools.go cmdtable.go usercmd.go
//	budget.go compact.go  pure shrinking and compaction of a conversation
//	loop.go           the turn loop (≤ 20 model calls), Observer, Recorder
//	instructions.go prompt.go plansync.go  the system prompt, AGENTS.md, the
//	                  plan's synthetic exchanges
//	state.go          the pure turn-state reducer
//	screen.go         the front-end interfaces and what they carry
//	provider.go       the Provider interface, requests, deltas, usage
//	message.go        the message vocabulary (agent/conversation's)
//	config.go         the process configuration from the environment
package agent
