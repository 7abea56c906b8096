package toolstest

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// CrashChild runs a test of this test binary as a child process that works
// until it is killed, so the parent can check what a crash leaves behind
// (a torn state file, a half-written undo log). Env names the variable
// that carries the child's argument and marks the process as the child.
//
// The child test calls Child first; it prints "ready" once set up, then
// works as fast as it can and prints a line containing "failed" when an
// operation fails. The parent test calls Parent first and then Kill once
// per round.
type CrashChild struct {
	Test string // the child test's name, e.g. "TestUndoCrashChild"
	Env  string
}

// Child returns the child's argument; it skips t unless t runs as the child.
func (c CrashChild) Child(t testing.TB) string {
	t.Helper()
	arg := os.Getenv(c.Env)
	if arg == "" {
		t.Skip("only runs as the child of a crash test")
	}
	return arg
}

// Parent skips t when it runs as the child, or under -short (it spawns
// child processes).
func (c CrashChild) Parent(t testing.TB) {
	t.Helper()
	if os.Getenv(c.Env) != "" {
		t.Skip("child")
	}
	Slow(t, "spawns child processes")
}

// Kill starts the child with arg, waits for its "ready" line, lets it work
// for after (the moment of the crash), kills it (SIGKILL on Unix) and
// waits for it. It fails t when the child reported a failure, and reports
// whether the kill stopped the child midway (rather than after its work).
func (c CrashChild) Kill(t testing.TB, arg string, after time.Duration) (midway bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+c.Test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), c.Env+"="+arg)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(out)
	require.True(t, sc.Scan(), "child produced no output")
	require.Equal(t, "ready", sc.Text())
	time.Sleep(after) // the crash comes at a random moment: nothing to wait for
	require.NoError(t, cmd.Process.Kill())
	for sc.Scan() {
		require.NotContains(t, sc.Text(), "failed", "child: %s", sc.Text())
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	return errors.As(err, &ee) && !ee.Exited()
}
