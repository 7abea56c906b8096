// Package ask holds the tools that put a question to a person through the
// editor: ask_user (a question to the user, with up to three suggested
// answers and a free-text one, through tools.Prompter) and ask_an_expert
// (a question the user relays to a human expert, through ExpertAsker). Both
// are ParentOnly: a subagent never talks to the user.
//
// It imports the tool contract (tools) and nothing else of Fido's.
package ask
