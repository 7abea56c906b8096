// Package agent is the conversation core, independent of Neovim and of any
// model service: message types and deep copy, the Provider and ModelLister
// seams (their OpenRouter/OpenAI-compatible implementation is the
// agent/openrouter package, chosen by cmd/fido), the turn loop (at most 20
// model iterations a turn), the pure turn-state reducer, the stable system
// prompt, compaction, usage totals, slash commands and suspend/recall. It
// talks to the editor only through the UI interface, and links no HTTP
// client.
package agent
