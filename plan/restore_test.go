package plan

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRestoreCallFor(t *testing.T) {
	s, path := openTemp(t)
	tool := NewUpdateTool(s, nil)
	res := run(t, tool, fullArgs)
	require.False(t, res.IsError)
	res = run(t, tool, fullArgs)
	require.False(t, res.IsError)

	// After a restart: the saved plan becomes a synthetic call + full result.
	re, _, err := OpenStore(path)
	require.NoError(t, err)
	p := re.Current()
	require.NotNil(t, p)
	rc := RestoreCallFor(*p)
	assert.Equal(t, "plan_restore_v2", rc.ID)
	assert.Equal(t, "update_plan", rc.Name)
	assert.Equal(t, res.Content, rc.Result, "the restored result is byte-identical to what update_plan returned")

	var a UpdateArgs
	require.NoError(t, json.Unmarshal([]byte(rc.Arguments), &a))
	assert.Equal(t, p.Args(), a)
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(rc.Arguments), &raw))
	assert.Len(t, raw, 2, "arguments are exactly {reason, items}")
	again, err := Normalize(a, nil, t0)
	require.NoError(t, err, "the synthetic arguments are a valid update_plan call")
	assert.Equal(t, p.Items, again.Items)

	back, err := ParseResult(rc.Result)
	require.NoError(t, err)
	assert.Equal(t, *p, back)
}

func TestClearedCall(t *testing.T) {
	s, _ := openTemp(t)
	_, err := s.Update(args(item("a", Pending)))
	require.NoError(t, err)
	cleared, err := s.Clear()
	require.NoError(t, err)
	rc := ClearedCall(cleared)
	assert.Equal(t, "plan_clear_v2", rc.ID)
	assert.Equal(t, "update_plan", rc.Name)
	assert.JSONEq(t, `{"reason":"plan cleared by the user","items":[]}`, rc.Arguments)
	assert.JSONEq(t, `{"version":2,"updatedAt":"2025-01-01T00:00:02.000Z","reason":"plan cleared by the user","items":[]}`, rc.Result)
	back, err := ParseResult(rc.Result)
	require.NoError(t, err)
	assert.Equal(t, cleared, back)
}

func TestParseResultRejectsNonPlans(t *testing.T) {
	for _, content := range []string{
		`{"error":"update_plan rejected, the plan was not changed"}`,
		`plan v3: 2/5 done`,
		`{"version":2,"updatedAt":"2025-01-01T00:00:00.000Z","reason":"r","items":[{"id":"a"}]}`,
		``,
	} {
		_, err := ParseResult(content)
		assert.Error(t, err, content)
	}
}
