package main

import (
	"context"
	"io"
	"sync"

	"github.com/fido-nvim/fido/tools/shell"
)

// harden applies the process-wide protections of the host before anything
// else runs: non-dumpable (its /proc entries, environ included, are closed
// to the commands it runs) and child subreaper (processes escaping a
// bash_exec command come back to it and can be ended). Both are Linux-only;
// elsewhere they do nothing.
func harden(logf func(string, ...any)) {
	if err := shell.ProtectProcess(); err != nil {
		logf("cannot mark the process non-dumpable: %v", err)
	}
	if err := shell.BecomeSubreaper(); err != nil {
		logf("cannot become the child subreaper: %v", err)
	}
}

// exitCleanup ends every process the host's commands started, once: when
// Neovim goes away (the end of stdin: :qa!, or Neovim was killed), when a
// signal stops the host, and when serving ends. It runs at the first of
// these, so the processes are gone well within a second of Neovim leaving.
type exitCleanup struct {
	once sync.Once
	logf func(string, ...any)
}

func (c *exitCleanup) run() {
	c.once.Do(func() {
		if n := shell.KillProcesses(); n > 0 {
			c.logf("ended %d processes left by bash_exec commands", n)
		}
	})
}

// watch runs the cleanup when ctx ends.
func (c *exitCleanup) watch(ctx context.Context) {
	go func() {
		<-ctx.Done()
		c.run()
	}()
}

// reader wraps the RPC input: its end (EOF or an error) means Neovim is gone.
func (c *exitCleanup) reader(r io.Reader) io.Reader { return eofHook{r: r, c: c} }

type eofHook struct {
	r io.Reader
	c *exitCleanup
}

func (e eofHook) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.c.run()
	}
	return n, err
}
