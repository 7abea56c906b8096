package ask

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
)

type fakeExpert struct {
	asked  []string
	answer string
	ok     bool
}

func (f *fakeExpert) AskExpert(ctx context.Context, q string) (string, bool, error) {
	f.asked = append(f.asked, q)
	return f.answer, f.ok, ctx.Err()
}

func TestAskExpert(t *testing.T) {
	tests := []struct {
		name, args string
		expert     *fakeExpert
		wantErr    string
		wantAnswer string
	}{
		{"answer", `{"question":"  Why is the cache keyed by tenant?  "}`, &fakeExpert{answer: " Because of GDPR.\n", ok: true}, "", "Because of GDPR."},
		{"cancelled", `{"question":"q"}`, &fakeExpert{ok: false}, "the user cancelled", ""},
		{"empty answer", `{"question":"q"}`, &fakeExpert{answer: "  ", ok: true}, "the user cancelled", ""},
		{"missing", `{}`, &fakeExpert{}, "missing or empty", ""},
		{"too long", `{"question":"` + strings.Repeat("x", MaxExpertQuestion+1) + `"}`, &fakeExpert{}, "at most 4000", ""},
		{"unknown arg", `{"question":"q","to":"bob"}`, &fakeExpert{}, "unknown argument", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := NewAskExpertTool(tt.expert).Run(context.Background(), tools.Invocation{}, json.RawMessage(tt.args))
			require.NoError(t, err)
			if tt.wantErr != "" {
				assert.True(t, res.IsError)
				assert.Contains(t, res.Content, tt.wantErr)
				return
			}
			require.False(t, res.IsError, res.Content)
			var got map[string]string
			require.NoError(t, json.Unmarshal([]byte(res.Content), &got))
			assert.Equal(t, tt.wantAnswer, got["answer"])
			assert.Equal(t, []string{"Why is the cache keyed by tenant?"}, tt.expert.asked, "the question is trimmed")
		})
	}
}

func TestAskExpertDeniedToSubagentWithoutAsking(t *testing.T) {
	fe := &fakeExpert{answer: "a", ok: true}
	reg, err := tools.NewRegistry(NewAskExpertTool(fe))
	require.NoError(t, err)
	res := reg.Invoke(context.Background(), tools.Invocation{DelegationDepth: 1, Identity: tools.Identity{Role: tools.RoleMain}}, "ask_an_expert", json.RawMessage(`{"question":"q"}`))
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "permission_denied")
	assert.Empty(t, fe.asked)
}

func TestAskExpertWithoutEditor(t *testing.T) {
	res, err := NewAskExpertTool(nil).Run(context.Background(), tools.Invocation{}, json.RawMessage(`{"question":"q"}`))
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "not available")
}
