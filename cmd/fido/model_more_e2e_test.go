package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/llmtest"
)

// modelPicker replaces vim.ui.select with one that records every /model
// picker's items and answers with the item whose id is _G.pick (nil:
// dismissed).
const modelPicker = `_G.model_asks = {}
_G.pick = nil
vim.ui.select = function(items, opts, cb)
  table.insert(_G.model_asks, { prompt = opts.prompt, items = items })
  for i, it in ipairs(items) do
    if _G.pick and it:find(_G.pick .. " ", 1, true) == 1 then return cb(it, i) end
  end
  cb(nil, nil)
end`

// startModels starts the host against an endpoint listing models, with
// setup({ models = preferred }).
func startModels(t *testing.T, models string, preferred []string) *fido {
	t.Helper()
	f := startFidoEnv(t, "", nil)
	f.srv.SetModels(models) // before :Fido, which starts the host that reads it
	require.True(t, f.Bool(t, `require("fido").setup({ models = ... })`, preferred))
	f.Lua(t, nil, modelPicker)
	require.NoError(t, f.Command("Fido"))
	// The host read the list at start: the budget follows test/model's window.
	f.WaitFor(t, `(require("fido").status().context or {}).limit == 75000`, 10*time.Second, `require("fido").status()`)
	return f
}

// askModel runs a /model command and returns the ids its picker listed, in order.
func (f *fido) askModel(t *testing.T, cmd string) []string {
	t.Helper()
	var before int
	f.Lua(t, &before, `return #_G.model_asks`)
	require.NoError(t, f.Command("Fido "+cmd))
	f.WaitFor(t, fmt.Sprintf(`#_G.model_asks == %d`, before+1), 5*time.Second, `_G.model_asks`,
		`vim.api.nvim_buf_get_lines(vim.fn.bufnr("fido://transcript"), 0, -1, false)`)
	var items []string
	f.Lua(t, &items, `return _G.model_asks[#_G.model_asks].items`)
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i], _, _ = strings.Cut(it, " · ")
	}
	return ids
}

func modelList(entries ...string) string {
	return `{"data":[` + strings.Join(entries, ",") + `]}`
}

func modelEntry(id string, ctx int) string {
	return fmt.Sprintf(`{"id":%q,"context_length":%d,"pricing":{"prompt":"0.000001","completion":"0.000002"},"supported_parameters":["tools"]}`, id, ctx)
}

// setup({ models }) puts those ids first in /model's picker, the rest in
// the endpoint's order; ids the endpoint does not list are not invented.
func TestE2EModelPickerListsPreferredFirst(t *testing.T) {
	f := startModels(t, modelList(
		modelEntry("test/model", 100000),
		modelEntry("a/plain", 8000),
		modelEntry("p/first", 32000),
		modelEntry("x/other", 16000),
		modelEntry("p/second", 64000),
	), []string{"p/second", "p/first", "p/missing"})
	ids := f.askModel(t, "/model")
	require.Len(t, ids, 5, "every listed model, nothing else")
	assert.Equal(t, []string{"p/second", "p/first"}, ids[:2], "setup({ models }) first, in the order given")
	assert.Equal(t, []string{"test/model", "a/plain", "x/other"}, ids[2:], "the others in the endpoint's order")
	assert.NotContains(t, ids, "p/missing")
	var prompt string
	f.Lua(t, &prompt, `return _G.model_asks[1].prompt`)
	assert.Contains(t, prompt, "now test/model")
	assert.True(t, f.Bool(t, `require("fido").status().model == "test/model"`), "a dismissed picker keeps the model")

	// Picking a preferred one switches to it.
	f.Lua(t, nil, `_G.pick = "p/second"`)
	f.askModel(t, "/model")
	f.WaitFor(t, `require("fido").status().model == "p/second"`, 5*time.Second, `require("fido").status()`)
	f.WaitFor(t, `require("fido").status().context.limit == 48000`, 5*time.Second, `require("fido").status()`)
}

// The model list is read once and kept: /model shows the kept list even
// after the endpoint's changed, /model refresh reads it again (the preferred
// ids still first) and its picker switches; later /model and the
// completion of ids use the new list.
func TestE2EModelRefreshRereadsTheList(t *testing.T) {
	f := startModels(t, modelList(
		modelEntry("test/model", 100000),
		modelEntry("old/gone", 16000),
		modelEntry("p/pref", 32000),
	), []string{"p/pref"})
	assert.Equal(t, []string{"p/pref", "test/model", "old/gone"}, f.askModel(t, "/model"))

	f.srv.SetModels(modelList(
		modelEntry("test/model", 100000),
		modelEntry("new/one", 64000),
		modelEntry("p/pref", 32000),
		modelEntry("new/two", 20000),
	))
	assert.Equal(t, []string{"p/pref", "test/model", "old/gone"}, f.askModel(t, "/model"), "the kept list until refreshed")
	var comp []string
	f.Lua(t, &comp, `return vim.fn.getcompletion("Fido /model ", "cmdline")`)
	assert.Contains(t, comp, "old/gone")
	assert.NotContains(t, comp, "new/one")

	f.Lua(t, nil, `_G.pick = "new/one"`)
	assert.Equal(t, []string{"p/pref", "test/model", "new/one", "new/two"}, f.askModel(t, "/model refresh"), "the endpoint's new list")
	f.WaitFor(t, `require("fido").status().model == "new/one"`, 5*time.Second, `require("fido").status()`)
	f.WaitFor(t, `require("fido").status().context.limit == 48000`, 5*time.Second, `require("fido").status()`)
	f.waitTranscript(t, "model: new/one (was test/model)", 5*time.Second)

	f.Lua(t, nil, `_G.pick = nil`)
	assert.Equal(t, []string{"p/pref", "test/model", "new/one", "new/two"}, f.askModel(t, "/model"), "the refreshed list is kept")
	f.Lua(t, &comp, `return vim.fn.getcompletion("Fido /model new", "cmdline")`)
	assert.Equal(t, []string{"new/one", "new/two"}, comp)
	f.Lua(t, &comp, `return vim.fn.getcompletion("Fido /model old", "cmdline")`)
	assert.Empty(t, comp, "a model the endpoint no longer lists is not offered")
	require.NoError(t, f.Command("Fido /model old/gone"))
	f.waitTranscript(t, `"old/gone" is not in the endpoint's model list`, 5*time.Second)
	assert.True(t, f.Bool(t, `require("fido").status().model == "new/one"`), "the model stays")

	f.srv.Enqueue(llmtest.Text("hi"))
	require.NoError(t, f.Command("Fido hello"))
	f.waitIdleAfter(t, 1)
	assert.Equal(t, "new/one", f.srv.Requests()[0].Get("model").String(), "the next request uses the picked model")
}
