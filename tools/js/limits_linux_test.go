package js

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/toolstest"
)

// A stopped snippet does not keep running: its worker process is gone when
// the call returns, whether it stopped on time, had to be killed, or the
// call was cancelled.
func TestJSExecWorkerIsGoneAfterTheCall(t *testing.T) {
	before := toolstest.Children(t, os.Getpid())
	tool := jsTool(t, nil, nil)
	_, out := jsRunCall(t, tool, map[string]any{"code": `/^(a+)+(?=b)/.test("a".repeat(40)); while (true) {}`, "timeout": 200})
	require.True(t, out.TimedOut)
	tool.Close() // the spare worker
	assert.Eventually(t, func() bool { return toolstest.Children(t, os.Getpid()) <= before }, 2*time.Second, 10*time.Millisecond, "the worker of a timed-out snippet still runs")

	tool = jsTool(t, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := tool.Run(ctx, tools.Invocation{}, json.RawMessage(`{"code":"while(true){}","timeout":5000}`))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	tool.Close()
	assert.Eventually(t, func() bool { return toolstest.Children(t, os.Getpid()) <= before }, 2*time.Second, 10*time.Millisecond, "the worker of a cancelled snippet still runs")
}
