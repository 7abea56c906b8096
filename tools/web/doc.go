// Package web holds the Tavily-backed web tools: websearch (a search with
// an optional synthesized answer) and browse_url (the text of one page).
// Both are read-only, so subagents may use them; without TAVILY_API_KEY they
// stay advertised and fail with a clear message, sending nothing.
//
// It imports the tool contract (tools) and nothing else of Fido's. Only the
// composition root (cmd/fido) imports it, so the conversation core (agent,
// plan, delegate) links no HTTP client through the web tools.
package web
