// Package secret keeps Fido's own keys (the OpenRouter and Tavily API keys)
// from leaving the process: Redact replaces every registered key in tool
// results (the tool registry applies it to every call), the transcript, the
// log and Fido's state files. Env names the variables holding the keys: the
// host removes them from its own environment at start, and ScrubbedEnv
// removes them from a child's (the JavaScript worker, a key command).
//
// It is a leaf: it imports only the standard library, so the tool contract
// (tools) and the editor side (nvim) can both use it.
package secret
