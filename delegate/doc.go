// Package delegate owns read-only delegation: the delegate tool, the deep
// fork of the parent's messages with its subagent_bootstrap tool result, the
// runner (timeout, cancellation, result-size limit) that reuses the agent
// loop with the same tool objects, and normalization of the subagent's final
// output to a delegate_result.
package delegate
