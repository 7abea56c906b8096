// Package toolstest helps test the tool packages, as httptest helps test
// HTTP code: a workspace in a temporary directory with a fake editor and an
// undo log of its own (Workspace), a scripted Prompter, Invoke to run one
// call through a real registry, and a tree of hostile symlinks
// (SymlinkFixture).
//
// Only tests import it. It imports the tool contract (tools), the
// workspace and testify, so the workspace's tests use it from the external
// test package (workspace_test) only.
package toolstest
