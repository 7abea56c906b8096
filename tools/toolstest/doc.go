// Package toolstest helps test the tool packages, as httptest helps test
// HTTP code: a workspace in a temporary directory with a fake editor and an
// undo log of its own (Workspace), a scripted Prompter, Invoke to run one
// call through a real registry, a tree of hostile symlinks
// (SymlinkFixture), and what several packages' tests share: bounded waits
// that also stop a runaway heap (WaitBounded, Bounded), the kill -9 child
// harness (CrashChild), process checks from /proc (Alive, Children,
// RequireProcFS) and Slow, which -short skips.
//
// Only tests import it (the plan and agent tests too). It imports the tool
// contract (tools), the workspace and testify, so the workspace's tests
// use it from the external test package (workspace_test) only.
package toolstest
