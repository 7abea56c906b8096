package agent

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent/conversation"
)

// userMessage is the newest user message of the newest request.
func userMessage(t *testing.T, p *scriptProvider) string {
	t.Helper()
	reqs := p.reqs()
	require.NotEmpty(t, reqs)
	msgs := reqs[len(reqs)-1].Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleUser {
			return msgs[i].Content
		}
	}
	t.Fatal("no user message")
	return ""
}

// patchTurn scripts one turn whose reply is a single search/replace patch of
// a.txt, then a text.
func patchTurn(p *scriptProvider, id, search, replace string) {
	p.add(callTools(ToolCall{ID: id, Name: "patch",
		Arguments: `{"operations":[{"path":"a.txt","search":"` + search + `","replace":"` + replace + `"}]}`})).
		add(answer("ok"))
}

// asks counts the edit-review pickers and answers each with choice.
type asks struct {
	mu     sync.Mutex
	n      int
	choice int
}

func (a *asks) fn(items []string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n++
	return a.choice
}

func (a *asks) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// /mode alone shows the mode and the choices; an unknown mode is refused and
// changes nothing; /mode default while already default is no change: the
// model is told nothing.
func TestModeShowRejectAndNoChange(t *testing.T) {
	p := (&scriptProvider{}).add(answer("a1"))
	s, ui := newTestSession(t, p, SessionConfig{})
	assert.Equal(t, ModeDefault, s.Mode(), "a new session is in the default mode")

	s.command("/mode")
	assert.True(t, ui.has("notice mode: default (default, plan, auto-edit)"), "%v", ui.events)

	s.command("/mode yolo")
	assert.True(t, ui.has(`error /mode: "yolo" is not one of default, plan, auto-edit`), "%v", ui.events)
	assert.Equal(t, ModeDefault, s.Mode())

	s.command("/mode default")
	assert.Equal(t, ModeDefault, s.Mode())
	assert.True(t, ui.has("notice mode: default"))
	s.Submit("hello")
	waitIdle(t, s)
	assert.Equal(t, "hello", userMessage(t, p), "no mode note when the mode did not change")
}

// /mode default after /mode plan gives the changing tools back: the patch
// plan mode refused now applies, the model is told once with the next user
// message, and the system message never changes.
func TestModeDefaultAfterPlanAllowsChangesAgain(t *testing.T) {
	ws, reg := workspaceRegistry(t, map[string]string{"a.txt": "one\n"})
	p := &scriptProvider{}
	patchTurn(p, "p1", "one", "two")
	patchTurn(p, "p2", "one", "two")
	p.add(answer("a3"))
	s, _ := newTestSession(t, p, SessionConfig{Registry: reg})

	s.command("/mode plan")
	require.Equal(t, ModePlan, s.Mode())
	s.Submit("change it")
	waitIdle(t, s)
	assert.Contains(t, userMessage(t, p), "switched to plan mode")
	assert.Contains(t, lastToolResult(t, p), "permission_denied")
	assert.Equal(t, "one\n", readWS(t, ws, "a.txt"), "plan mode wrote nothing")

	s.command("/mode default")
	assert.Equal(t, ModeDefault, s.Mode())
	s.Submit("now change it")
	waitIdle(t, s)
	msg := userMessage(t, p)
	assert.True(t, strings.HasPrefix(msg, "now change it"), msg)
	assert.Contains(t, msg, "[Fido: the user switched back to the default mode: changing tools work again (with the usual approvals)]")
	assert.NotContains(t, msg, "plan mode:", "only the newest change is told")
	assert.NotContains(t, lastToolResult(t, p), "permission_denied")
	assert.Equal(t, "two\n", readWS(t, ws, "a.txt"))

	s.Submit("thanks")
	waitIdle(t, s)
	assert.Equal(t, "thanks", userMessage(t, p), "the note is told once")
	reqs := p.reqs()
	assert.Equal(t, reqs[0].Messages[0], reqs[len(reqs)-1].Messages[0], "the system message does not change")
}

// /mode auto-edit applies file changes without review even with /edits
// review, while /edits itself stays "review"; /mode default brings the review
// back. auto-edit is not plan mode: changing tools run.
func TestModeAutoEditSkipsEditReview(t *testing.T) {
	ws, reg := workspaceRegistry(t, map[string]string{"a.txt": "one\n"})
	p := &scriptProvider{}
	patchTurn(p, "p1", "one", "two")
	patchTurn(p, "p2", "one", "two")
	patchTurn(p, "p3", "two", "three")
	s, ui := newTestSession(t, p, SessionConfig{Registry: reg, Edits: EditsReview})
	a := &asks{choice: 0} // Reject (listed first)
	ui.selectFn = a.fn

	// Default mode with /edits review: asked, rejected, nothing written.
	s.Submit("edit 1")
	waitIdle(t, s)
	assert.Equal(t, 1, a.count(), "review mode asks")
	assert.True(t, ui.has("edit patch"), "the diff is shown")
	assert.Equal(t, "one\n", readWS(t, ws, "a.txt"))
	assert.Contains(t, lastToolResult(t, p), "rejected")

	s.command("/mode auto-edit")
	assert.Equal(t, ModeAutoEdit, s.Mode())
	assert.Equal(t, EditsReview, s.info().Edits, "/edits is left as it was")
	assert.Equal(t, ModeAutoEdit, s.info().Mode)
	shown := len(ui.events)
	s.Submit("edit 2")
	waitIdle(t, s)
	assert.Equal(t, 1, a.count(), "auto-edit does not ask")
	assert.Equal(t, "two\n", readWS(t, ws, "a.txt"), "the change applied at once")
	assert.NotContains(t, lastToolResult(t, p), "permission_denied")
	assert.Contains(t, userMessage(t, p), "[Fido: the user switched to auto-edit mode: file edits apply without review; commands still need approval]")
	ui.mu.Lock()
	for _, e := range ui.events[shown:] {
		assert.False(t, strings.HasPrefix(e, "edit patch"), "no diff preview in auto-edit: %q", e)
	}
	ui.mu.Unlock()

	s.command("/mode default")
	s.Submit("edit 3")
	waitIdle(t, s)
	assert.Equal(t, 2, a.count(), "back in the default mode, review asks again")
	assert.Equal(t, "two\n", readWS(t, ws, "a.txt"), "rejected")
}

// The mode is saved with the conversation (Meta.Mode) as soon as it changes,
// and a resumed conversation comes back in it: the guard still refuses in
// plan mode and the model is not told again (it was, in the saved message).
func TestModeSavedAndRestoredOnResume(t *testing.T) {
	ws, reg := workspaceRegistry(t, map[string]string{"a.txt": "one\n"})
	store := conversation.NewStore(t.TempDir())
	p1 := (&scriptProvider{}).add(answer("planned"))
	s1, _ := newTestSession(t, p1, SessionConfig{Registry: reg, Conversations: store})
	s1.command("/mode plan")
	id := s1.ConversationID()
	require.NotEmpty(t, id, "the mode change saves the conversation")
	conv, err := store.Load(id)
	require.NoError(t, err)
	assert.Equal(t, ModePlan, conv.Meta.Mode, "saved before any turn")
	s1.Submit("look around")
	waitIdle(t, s1)
	s1.Close()

	p2 := &scriptProvider{}
	patchTurn(p2, "p1", "one", "two")
	s2, _ := newTestSession(t, p2, SessionConfig{Registry: reg, Conversations: store, Resume: true})
	require.Equal(t, id, s2.ConversationID(), "the conversation was resumed")
	assert.Equal(t, ModePlan, s2.Mode(), "resumed in plan mode")
	assert.Equal(t, ModePlan, s2.info().Mode)
	s2.Submit("change it")
	waitIdle(t, s2)
	assert.Contains(t, lastToolResult(t, p2), "permission_denied")
	assert.Equal(t, "one\n", readWS(t, ws, "a.txt"))
	assert.Equal(t, "change it", userMessage(t, p2), "the saved note is not told again")
	s2.command("/mode auto-edit")
	s2.Close()

	s3, _ := newTestSession(t, &scriptProvider{}, SessionConfig{Registry: reg, Conversations: store, Resume: true})
	require.Equal(t, id, s3.ConversationID())
	assert.Equal(t, ModeAutoEdit, s3.Mode(), "the newest change wins")
	s3.Close()
	conv, err = store.Load(id)
	require.NoError(t, err)
	assert.Equal(t, ModeAutoEdit, conv.Meta.Mode)
}

// Switching conversations with /sessions brings each one's saved mode back,
// "default" included.
func TestModeFollowsConversationOnSwitch(t *testing.T) {
	store := conversation.NewStore(t.TempDir())
	p := (&scriptProvider{}).add(answer("a")).add(answer("b"))
	s, ui := newTestSession(t, p, SessionConfig{Conversations: store})
	s.command("/mode plan")
	s.Submit("topic alpha")
	waitIdle(t, s)
	alpha := s.ConversationID()

	s.command("/new")
	s.command("/mode default")
	s.Submit("topic beta")
	waitIdle(t, s)
	beta := s.ConversationID()
	require.NotEqual(t, alpha, beta)
	require.Equal(t, ModeDefault, s.Mode())

	pick := func(title string) {
		ui.selectFn = func(items []string) int {
			for i, it := range items {
				if strings.HasPrefix(it, title+" ·") {
					return i
				}
			}
			return -1
		}
		s.command("/sessions")
	}
	pick("topic alpha")
	require.Equal(t, alpha, s.ConversationID())
	assert.Equal(t, ModePlan, s.Mode(), "alpha was left in plan mode")
	pick("topic beta")
	require.Equal(t, beta, s.ConversationID())
	assert.Equal(t, ModeDefault, s.Mode(), "beta was left in the default mode")
}

// A conversation started with /new or /fork while a mode is on runs in that
// mode (the statusline shows it), so that is the mode it is saved in and
// resumed with.
func TestModeSavedWithNewAndForkedConversations(t *testing.T) {
	for _, cmd := range []string{"/new", "/fork"} {
		t.Run(strings.TrimPrefix(cmd, "/"), func(t *testing.T) {
			store := conversation.NewStore(t.TempDir())
			p := (&scriptProvider{}).add(answer("a")).add(answer("b"))
			s, _ := newTestSession(t, p, SessionConfig{Conversations: store})
			s.command("/mode plan")
			s.Submit("first")
			waitIdle(t, s)
			first := s.ConversationID()
			s.command(cmd)
			s.Submit("second")
			waitIdle(t, s)
			second := s.ConversationID()
			require.NotEqual(t, first, second)
			require.Equal(t, ModePlan, s.Mode(), "the session stays in plan mode")
			s.Close()

			conv, err := store.Load(second)
			require.NoError(t, err)
			assert.Equal(t, ModePlan, conv.Meta.Mode, "Meta.Mode: the mode the conversation was left in")
			s2, _ := newTestSession(t, &scriptProvider{}, SessionConfig{Conversations: store, Resume: true})
			require.Equal(t, second, s2.ConversationID())
			assert.Equal(t, ModePlan, s2.Mode(), "resumed in the mode it was left in")
		})
	}
}

// The model hears of the mode whenever the conversation it sees does not
// already say so: a /new in plan mode tells the new conversation with its
// first message; a change undone before any message tells nothing.
func TestModeNoteFollowsWhatTheConversationSays(t *testing.T) {
	p := (&scriptProvider{}).add(answer("a1")).add(answer("a2")).add(answer("a3")).add(answer("a4"))
	s, _ := newTestSession(t, p, SessionConfig{})

	s.command("/mode plan")
	s.Submit("look")
	waitIdle(t, s)
	assert.Contains(t, userMessage(t, p), modeNotes[ModePlan])

	s.command("/new")
	s.Submit("look again")
	waitIdle(t, s)
	assert.Equal(t, "look again"+modeNotes[ModePlan], userMessage(t, p),
		"a new conversation in plan mode is told with its first message")

	s.command("/mode default")
	s.command("/mode plan")
	s.Submit("and again")
	waitIdle(t, s)
	assert.Equal(t, "and again", userMessage(t, p), "a change undone before the next message tells nothing")

	s.command("/new")
	s.command("/mode default")
	s.Submit("fresh")
	waitIdle(t, s)
	assert.Equal(t, "fresh", userMessage(t, p), "a new conversation starts in the default mode as the model knows it")
}

// A conversation whose mode changed but whose user quit before sending a
// message comes back in that mode, and its next message tells the model.
func TestModeNoteToldAfterResumeWhenNeverSent(t *testing.T) {
	store := conversation.NewStore(t.TempDir())
	p1 := (&scriptProvider{}).add(answer("a1"))
	s1, _ := newTestSession(t, p1, SessionConfig{Conversations: store})
	s1.Submit("hello")
	waitIdle(t, s1)
	s1.command("/mode plan")
	id := s1.ConversationID()
	s1.Close()

	p2 := (&scriptProvider{}).add(answer("a2")).add(answer("a3"))
	s2, _ := newTestSession(t, p2, SessionConfig{Conversations: store, Resume: true})
	require.Equal(t, id, s2.ConversationID(), "the conversation was resumed")
	require.Equal(t, ModePlan, s2.Mode())
	s2.Submit("plan it")
	waitIdle(t, s2)
	assert.Equal(t, "plan it"+modeNotes[ModePlan], userMessage(t, p2), "told once the conversation resumes")
	s2.Submit("more")
	waitIdle(t, s2)
	assert.Equal(t, "more", userMessage(t, p2), "and only once")
	s2.Close()
}

func TestModeKnown(t *testing.T) {
	u := func(c string) Message { return Message{Role: RoleUser, Content: c} }
	a := func(c string) Message { return Message{Role: RoleAssistant, Content: c} }
	assert.Equal(t, ModeDefault, modeKnown(nil))
	assert.Equal(t, ModeDefault, modeKnown([]Message{u("hi"), a(modeNotes[ModePlan])}), "only user messages carry notes")
	assert.Equal(t, ModePlan, modeKnown([]Message{u("x" + modeNotes[ModePlan]), a("ok"), u("y")}))
	assert.Equal(t, ModeAutoEdit, modeKnown([]Message{u("x" + modeNotes[ModePlan]), u("y" + modeNotes[ModeAutoEdit])}))
	assert.Equal(t, ModeDefault, modeKnown([]Message{u("x" + modeNotes[ModePlan] + modeNotes[ModeDefault])}), "the later note in one message wins")
}
