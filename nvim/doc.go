// Package nvim is the Neovim side of Fido's Go host: the msgpack-RPC host and
// its handlers, the agent.UI implementation (a transcript renderer that
// coalesces deltas into one batched call per flush, the statusline, the plan
// float, the subagent bar, prompts through vim.ui.select), pure layout math,
// and the headless-Neovim test harness.
package nvim
