package conversation

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sampleTurn(i int) []Message {
	id := fmt.Sprintf("call_%d", i)
	return []Message{
		{Role: RoleUser, Content: fmt.Sprintf("question %d\nsecond line", i)},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: id, Name: "read_file", Arguments: `{"path":"a.go"}`}}},
		{Role: RoleTool, ToolCallID: id, Name: "read_file", Content: strings.Repeat("x", 200)},
		{Role: RoleAssistant, Content: fmt.Sprintf("answer %d", i)},
	}
}

func TestConversationRoundTrip(t *testing.T) {
	s := NewStore(t.TempDir())
	l, err := s.Create("", "/ws", "m/one")
	require.NoError(t, err)
	var want []Message
	require.NoError(t, l.Append(Message{Role: RoleSystem, Content: "sys"}))
	for i := 0; i < 3; i++ {
		for _, m := range sampleTurn(i) {
			require.NoError(t, l.Append(m))
			want = append(want, m)
		}
	}
	require.NoError(t, l.SetMeta("", "m/two", 0.25))
	require.NoError(t, l.Close())

	conv, err := s.Load(l.ID())
	require.NoError(t, err)
	assert.Equal(t, want, conv.Messages, "the system message is never stored")
	assert.Equal(t, "question 0", conv.Meta.Title)
	assert.Equal(t, "m/two", conv.Meta.Model)
	assert.Equal(t, 0.25, conv.Meta.Cost)
	assert.Equal(t, 12, conv.Meta.Messages)
	assert.Empty(t, conv.Warnings)
}

func TestConversationTornLastRecordIsIgnoredAndCut(t *testing.T) {
	s := NewStore(t.TempDir())
	l, err := s.Create("", "/ws", "m")
	require.NoError(t, err)
	require.NoError(t, l.Append(Message{Role: RoleUser, Content: "hello"}))
	id := l.ID()
	require.NoError(t, l.Close())
	f, err := os.OpenFile(filepath.Join(s.Dir(), id+".jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"t":"msg","at":"2026-01-01T00:00:00Z","m":{"role":"assist`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	l2, conv, err := s.Open(id)
	require.NoError(t, err)
	assert.Equal(t, []Message{{Role: RoleUser, Content: "hello"}}, conv.Messages)
	assert.Len(t, conv.Warnings, 1)
	require.NoError(t, l2.Append(Message{Role: RoleAssistant, Content: "hi"}))
	require.NoError(t, l2.Close())
	conv, err = s.Load(id)
	require.NoError(t, err)
	assert.Equal(t, "hi", conv.Messages[1].Content, "the next record starts on a line of its own")
	assert.Empty(t, conv.Warnings)
}

func TestConversationInterruptedToolCallsAreAnsweredTruthfully(t *testing.T) {
	s := NewStore(t.TempDir())
	l, err := s.Create("", "/ws", "m")
	require.NoError(t, err)
	require.NoError(t, l.Append(Message{Role: RoleUser, Content: "go"}))
	require.NoError(t, l.Append(Message{Role: RoleAssistant, ToolCalls: []ToolCall{
		{ID: "a", Name: "bash_exec", Arguments: "{}"}, {ID: "b", Name: "read_file", Arguments: "{}"}, {ID: "c", Name: "rm", Arguments: "{}"},
	}}))
	require.NoError(t, l.ToolStarted("a"))
	require.NoError(t, l.Append(Message{Role: RoleTool, ToolCallID: "a", Name: "bash_exec", Content: "ok"}))
	require.NoError(t, l.ToolStarted("b"))
	require.NoError(t, l.Close())

	conv, err := s.Load(l.ID())
	require.NoError(t, err)
	require.Len(t, conv.Messages, 5)
	assert.Equal(t, "a", conv.Messages[2].ToolCallID)
	assert.Equal(t, "ok", conv.Messages[2].Content)
	assert.Equal(t, "b", conv.Messages[3].ToolCallID)
	assert.Contains(t, conv.Messages[3].Content, "while this tool was running")
	assert.Equal(t, "c", conv.Messages[4].ToolCallID)
	assert.Contains(t, conv.Messages[4].Content, "did not run")
	assert.Len(t, conv.Warnings, 2)
}

func TestConversationOwnedByOneHost(t *testing.T) {
	s := NewStore(t.TempDir())
	l, err := s.Create("", "/ws", "m")
	require.NoError(t, err)
	_, _, err = s.Open(l.ID())
	assert.ErrorIs(t, err, ErrBusy)
	assert.ErrorIs(t, s.Delete(l.ID()), ErrBusy)
	_, err = s.Load(l.ID())
	assert.NoError(t, err, "browsing needs no ownership")
	require.NoError(t, l.Close())
	l2, _, err := s.Open(l.ID())
	require.NoError(t, err)
	require.NoError(t, l2.Close())
	require.NoError(t, s.Delete(l.ID()))
	metas, _, err := s.List()
	require.NoError(t, err)
	assert.Empty(t, metas)
}

func TestConversationReplaceLiveKeepsTheFullHistory(t *testing.T) {
	s := NewStore(t.TempDir())
	l, err := s.Create("", "/ws", "m")
	require.NoError(t, err)
	for _, m := range sampleTurn(1) {
		require.NoError(t, l.Append(m))
	}
	summary := Message{Role: RoleUser, Content: "summary of the conversation"}
	require.NoError(t, l.ReplaceLive([]Message{{Role: RoleSystem, Content: "sys"}, summary}, "compact"))
	require.NoError(t, l.Append(Message{Role: RoleUser, Content: "next"}))
	require.NoError(t, l.Close())
	conv, err := s.Load(l.ID())
	require.NoError(t, err)
	assert.Equal(t, []Message{summary, {Role: RoleUser, Content: "next"}}, conv.Messages)
	assert.Len(t, conv.Full, 5)
	assert.Equal(t, 2, conv.Meta.Messages)
}

func TestConversationListNewestFirstAndNamesBrokenFiles(t *testing.T) {
	dir := t.TempDir()
	s := NewStore(dir)
	var ids []string
	for i := 0; i < 3; i++ {
		l, err := s.Create("", "/ws", "m")
		require.NoError(t, err)
		require.NoError(t, l.Append(Message{Role: RoleUser, Content: fmt.Sprintf("conversation %d", i)}))
		ids = append(ids, l.ID())
		require.NoError(t, l.Close())
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "20200101T000000Z-deadbeef.jsonl"), []byte("garbage\n"), 0o600))
	metas, bad, err := s.List()
	require.NoError(t, err)
	require.Len(t, metas, 3)
	assert.Equal(t, ids[2], metas[0].ID)
	assert.Equal(t, "conversation 2", metas[0].Title)
	assert.Equal(t, []string{"20200101T000000Z-deadbeef.jsonl"}, bad)
	newest, err := s.Newest()
	require.NoError(t, err)
	assert.Equal(t, ids[2], newest)
	_, err = s.Load("../../etc/passwd")
	assert.Error(t, err)
}

func TestConversationScrubsSecrets(t *testing.T) {
	dir := t.TempDir()
	s := NewStore(dir)
	s.Scrub = func(x string) string { return strings.ReplaceAll(x, "sk-secret-123", "[redacted]") }
	l, err := s.Create("", "/ws", "m")
	require.NoError(t, err)
	require.NoError(t, l.Append(Message{Role: RoleTool, ToolCallID: "x", Content: "key=sk-secret-123"}))
	require.NoError(t, l.Close())
	b, err := os.ReadFile(filepath.Join(dir, l.ID()+".jsonl"))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "sk-secret-123")
	assert.Contains(t, string(b), "[redacted]")
}

// TestConversationSurvivesKill9 appends from a child process that is killed
// mid-write: what was fsynced before is always readable, and the history
// loads valid.
func TestConversationSurvivesKill9(t *testing.T) {
	if dir := os.Getenv("FIDO_CONV_CHILD"); dir != "" {
		s := NewStore(dir)
		l, err := s.Create("", "/ws", "m")
		if err != nil {
			os.Exit(3)
		}
		fmt.Println(l.ID())
		for i := 0; ; i++ {
			for _, m := range sampleTurn(i) {
				_ = l.Append(m)
			}
		}
	}
	for round := 0; round < 5; round++ {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestConversationSurvivesKill9$")
		cmd.Env = append(os.Environ(), "FIDO_CONV_CHILD="+dir)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		buf := make([]byte, 64)
		n, _ := out.Read(buf)
		id := strings.TrimSpace(strings.Split(string(buf[:n]), "\n")[0])
		time.Sleep(time.Duration(20+round*15) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
		conv, err := NewStore(dir).Load(id)
		require.NoError(t, err)
		require.NotEmpty(t, conv.Messages)
		assertStrictHistory(t, conv.Messages)
	}
}

// assertStrictHistory checks what a strict provider checks: every tool call
// answered right after its message, in order, no result without its call.
func assertStrictHistory(t *testing.T, ms []Message) {
	t.Helper()
	for i := 0; i < len(ms); i++ {
		m := ms[i]
		if m.Role == RoleTool {
			t.Fatalf("message %d: tool result %s without its call", i, m.ToolCallID)
		}
		for k, call := range m.ToolCalls {
			require.Less(t, i+1+k, len(ms), "call %s unanswered", call.ID)
			require.Equal(t, RoleTool, ms[i+1+k].Role)
			require.Equal(t, call.ID, ms[i+1+k].ToolCallID)
		}
		i += len(m.ToolCalls)
	}
}

func BenchmarkConversationLoad1000(b *testing.B) {
	s := NewStore(b.TempDir())
	l, err := s.Create("", "/ws", "m")
	require.NoError(b, err)
	for i := 0; i < 250; i++ {
		for _, m := range sampleTurn(i) {
			require.NoError(b, l.Append(m))
		}
	}
	require.NoError(b, l.Close())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		conv, err := s.Load(l.ID())
		if err != nil || len(conv.Messages) != 1000 {
			b.Fatal(err)
		}
	}
}

// A batch's records reach the file together, in one write, when it ends;
// a batch inside it changes nothing.
func TestConversationBatchWritesOnce(t *testing.T) {
	s := NewStore(t.TempDir())
	l, err := s.Create("", "/ws", "m/one")
	require.NoError(t, err)
	size := func() int64 {
		st, err := os.Stat(s.path(l.ID()))
		require.NoError(t, err)
		return st.Size()
	}
	head := size()
	require.Positive(t, head)
	user := Message{Role: RoleUser, Content: "first question"}
	require.NoError(t, l.Batch(func() error {
		require.NoError(t, l.SetMode("plan"))
		require.NoError(t, l.Batch(func() error { return l.Append(user) }))
		assert.Equal(t, head, size(), "nothing written before the batch ends")
		return nil
	}))
	assert.Greater(t, size(), head)
	failed := fmt.Errorf("the caller's own error")
	assert.ErrorIs(t, l.Batch(func() error {
		require.NoError(t, l.Append(Message{Role: RoleAssistant, Content: "answer"}))
		return failed
	}), failed, "the batch reports its function's error and still writes")
	require.NoError(t, l.Close())

	conv, err := s.Load(l.ID())
	require.NoError(t, err)
	assert.Equal(t, []Message{user, {Role: RoleAssistant, Content: "answer"}}, conv.Messages)
	assert.Equal(t, "plan", conv.Meta.Mode)
	assert.Equal(t, "first question", conv.Meta.Title)
	assert.Error(t, l.Batch(func() error { return l.Append(user) }), "a closed log refuses the batch")
}
