package nvim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
)

// A burst the host reads faster than it flushes (here 40,000 deltas, about
// 350 KB, and a 100 KB line) reaches Neovim in batches within DefaultLimit,
// every piece in order; status() turns idle only with the batch that
// completes the transcript.
func TestE2EBurstArrivesInBoundedBatches(t *testing.T) {
	n, srv := startFido(t)
	require.NoError(t, n.Command("Fido"))
	n.Lua(t, nil, `local b = require("fido.bridge")
local apply = b.apply
_G.batches = { n = 0, bytes = 0, lines = 0, early_idle = false }
local rec = _G.batches
b.apply = function(batch)
  local tr = batch.transcript
  if type(tr) == "table" then
    local bytes, lines = 0, 0
    for _, l in ipairs(type(tr.lines) == "table" and tr.lines or {}) do bytes, lines = bytes + #l, lines + 1 end
    if type(tr.append) == "table" then bytes, lines = bytes + #tr.append.text, lines + 1 end
    rec.n, rec.bytes, rec.lines = rec.n + 1, math.max(rec.bytes, bytes), math.max(rec.lines, lines)
  end
  local resync = apply(batch)
  local st = type(batch.status) == "table" and batch.status or nil
  if st and st.state == "idle" and rec.n > 0 then
    local ls = vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)
    rec.idle_lines = #ls
    rec.early_idle = rec.early_idle or not vim.tbl_contains(ls, "the end")
  end
  return resync
end`)
	var want strings.Builder
	r := llmtest.Reply()
	for i := 0; i < 40000; i++ {
		piece := "wörd "
		if i%16 == 15 {
			piece = "wörd\n"
		}
		r.Content(piece)
		want.WriteString(piece)
	}
	long := strings.Repeat("x", 100<<10)
	r.Content("\n" + long + "\nthe end")
	want.WriteString("\n" + long + "\nthe end")
	srv.Enqueue(r.Usage(10, 40000, 0, 0.001).Finish("stop"))
	n.Lua(t, nil, `require("fido").submit("burst")`)
	n.WaitFor(t, `require("fido").status().usage.calls == 1 and require("fido").status().state == "idle"`, 60*time.Second,
		`_G.batches`, `require("fido").status().state`)

	var rec struct {
		N         int  `msgpack:"n"`
		Bytes     int  `msgpack:"bytes"`
		Lines     int  `msgpack:"lines"`
		EarlyIdle bool `msgpack:"early_idle"`
	}
	n.Lua(t, &rec, `return _G.batches`)
	assert.LessOrEqual(t, rec.Bytes, DefaultLimit.Bytes, "no batch over the byte bound")
	assert.LessOrEqual(t, rec.Lines, DefaultLimit.Lines, "no batch over the line bound")
	assert.Greater(t, rec.N, 5, "the burst took several batches")
	assert.False(t, rec.EarlyIdle, "the status turned idle only with the whole transcript")

	lines := n.Lines(t, "fido://transcript")
	start := -1
	for i, l := range lines {
		if l == "## Fido" {
			start = i + 1
		}
	}
	require.GreaterOrEqual(t, start, 0)
	// The 100 KB line shows as rows of MaxRowBytes; joined they are the line.
	wantLines := strings.Split(strings.ReplaceAll(want.String(), long, strings.Join(chunks(long, MaxRowBytes), "\n")), "\n")
	require.GreaterOrEqual(t, len(lines)-start, len(wantLines))
	assert.Equal(t, wantLines, lines[start:start+len(wantLines)], "every piece, in order")
}

func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		out, s = append(out, s[:n]), s[n:]
	}
	return append(out, s)
}
