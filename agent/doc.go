// Package agent is the conversation core, independent of Neovim: message
// types and deep copy, the Provider interface and its OpenRouter/OpenAI-
// compatible implementation (go-openai), the turn loop (at most 20 model
// iterations a turn), the pure turn-state reducer, the stable system prompt,
// compaction, usage totals, slash commands and suspend/recall. It talks to the
// editor only through the UI interface.
package agent
