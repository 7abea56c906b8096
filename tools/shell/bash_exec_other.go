//go:build !unix

package shell

import (
	"context"
	"runtime"
	"time"

	"github.com/fido-nvim/fido/tools"
)

// execute: bash_exec needs a Unix system (bash, process groups and sessions
// to end a command's whole tree).
func (t *BashTool) execute(context.Context, string, time.Duration, string, *boxRun) tools.Result {
	return tools.ErrorResult("bash_exec is not supported on this system (%s): it needs a Unix system with bash; nothing was run", runtime.GOOS)
}

func killGroupNow(int) {}
