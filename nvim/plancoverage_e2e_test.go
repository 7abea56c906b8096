package nvim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
)

// coveragePlan has six items with details and evidence: its full form is
// far taller than a third of any transcript.
const coveragePlan = `{"reason":"refactor the lexer and parser","items":[` +
	`{"id":"read","title":"Read the lexer and the parser","status":"done","details":"lexer.go, parser.go and their tests","evidence":["lexer.go:42","parser.go:7"]},` +
	`{"id":"tests","title":"Write failing tests for CRLF input","status":"done","evidence":["lexer_test.go:90"]},` +
	`{"id":"impl","title":"Fix tokenizing of CRLF line endings","status":"in_progress","details":"handle \\r\\n in the scanner and in string literals","dependencies":["read","tests"],"next_action":"patch scanner.go"},` +
	`{"id":"parser","title":"Teach the parser the new token","status":"pending","details":"one more case in parsePrimary","dependencies":["impl"],"next_action":"patch parser.go"},` +
	`{"id":"docs","title":"Document the change","status":"blocked","details":"waiting for the maintainers' wording","next_action":"ask"},` +
	`{"id":"verify","title":"Run the whole test suite","status":"pending","dependencies":["parser"],"next_action":"go test ./..."}]}`

// coverage measures, in screen cells, how many of the transcript window's
// rows the plan float overlaps, and what of the float's content is visible.
const coverage = `
local tw = require("fido.layout").transcript_win()
local pw = require("fido.planwin").win()
local tpos = vim.api.nvim_win_get_position(tw)
local th, twd = vim.api.nvim_win_get_height(tw), vim.api.nvim_win_get_width(tw)
local cfg = vim.api.nvim_win_get_config(pw)
local row = type(cfg.row) == "table" and cfg.row[false] or cfg.row
local col = type(cfg.col) == "table" and cfg.col[false] or cfg.col
local top, bottom = row, row + cfg.height + 2 -- rounded border
local left, right = col - cfg.width - 2, col  -- anchor NE
local covered = 0
for r = tpos[1], tpos[1] + th - 1 do
  if r >= top and r < bottom and left < tpos[2] + twd and right > tpos[2] then
    covered = covered + 1
  end
end
local view = vim.api.nvim_win_call(pw, function() return vim.fn.winsaveview() end)
local lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(pw), view.topline - 1, view.topline - 1 + cfg.height, false)
return { rows = th, covered = covered, visible = table.concat(lines, "\n"), compact = require("fido.planwin").compact() }`

type planCoverage struct {
	Rows    int    `msgpack:"rows"`
	Covered int    `msgpack:"covered"`
	Visible string `msgpack:"visible"`
	Compact bool   `msgpack:"compact"`
}

// While a turn streams, the plan float leaves at least two thirds of the
// transcript's rows uncovered at 200x50, 120x40 and 90x30 with the default
// layout, and shows the item in progress with its next action; when the
// turn ends it shows the full plan again.
func TestE2EPlanFloatLeavesTheTranscriptReadable(t *testing.T) {
	for _, size := range [][2]int{{200, 50}, {120, 40}, {90, 30}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			n, srv := startFido(t)
			require.NoError(t, n.Command(fmt.Sprintf("set columns=%d lines=%d", size[0], size[1])))
			require.NoError(t, n.Command("Fido"))
			srv.Enqueue(
				llmtest.Reply().ToolCall("call_plan", "update_plan", coveragePlan, 3).Finish("tool_calls"),
				llmtest.Reply().Content("Working on the scanner now. ").Content("Here is what I found so far.").Stall(),
			)
			n.Lua(t, nil, `require("fido").submit("refactor it")`)
			n.WaitFor(t, `require("fido.planwin").win() ~= nil and require("fido").status().state == "streaming"`, 10*time.Second,
				`require("fido").status().state`)
			n.WaitFor(t, `vim.tbl_contains(vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false), "Working on the scanner now. Here is what I found so far.")`,
				5*time.Second, `vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
			var c planCoverage
			n.Lua(t, &c, coverage)
			t.Logf("%dx%d: transcript %d rows, plan float over %d", size[0], size[1], c.Rows, c.Covered)
			assert.True(t, c.Compact, "compact while the turn runs")
			assert.GreaterOrEqual(t, 3*(c.Rows-c.Covered), 2*c.Rows, "at least two thirds of the transcript uncovered")
			assert.Contains(t, c.Visible, "impl")
			assert.Contains(t, c.Visible, "Fix tokenizing")
			assert.Contains(t, c.Visible, "next: patch scanner.go")
			assert.Contains(t, c.Visible, "docs", "blocked items are listed")

			require.NoError(t, n.Command("FidoCancel"))
			n.WaitFor(t, `require("fido").status().state == "idle" and not require("fido.planwin").compact()`, 5*time.Second)
			assert.Contains(t, n.Lines(t, "fido://plan"), "  depends on: read, tests", "the full form when idle")

			// :FidoPlan focuses the full form even while a turn runs.
			srv.Enqueue(llmtest.Reply().Content("again").Stall())
			n.Lua(t, nil, `require("fido").submit("go on")`)
			n.WaitFor(t, `require("fido.planwin").compact()`, 10*time.Second)
			require.NoError(t, n.Command("FidoPlan"))
			n.WaitFor(t, `vim.api.nvim_get_current_win() == require("fido.planwin").win() and not require("fido.planwin").compact()`, 5*time.Second)
			require.NoError(t, n.Command("wincmd p"))
			n.WaitFor(t, `require("fido.planwin").compact()`, 5*time.Second)
			require.NoError(t, n.Command("FidoCancel"))
		})
	}
}
