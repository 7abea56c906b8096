// Package conversation holds the vocabulary of a conversation and its
// persistence: the provider-neutral Message, ToolCall and Role (package
// agent aliases them as its own), deep copies, and the Store of a
// workspace's conversations, one append-only JSON Lines Log per
// conversation, locked by the process that writes it, read back and
// repaired (interrupted tool calls answered) by Open and Load. It knows no
// session, provider or editor.
package conversation

import "time"

// now is replaceable in tests.
var now = time.Now
