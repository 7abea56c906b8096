package agent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestContextLengthFromModelList(t *testing.T) {
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		if r.URL.Path != "/api/v1/models" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"data":[{"id":"a/small","context_length":8192},{"id":"b/big","top_provider":{"context_length":262144}},{"id":"c/none"}]}`))
	}))
	t.Cleanup(srv.Close)
	p := NewOpenRouter(OpenRouterConfig{BaseURL: srv.URL + "/api/v1", APIKey: "k"})
	n, err := p.ContextLength(context.Background(), "a/small")
	require.NoError(t, err)
	assert.Equal(t, 8192, n)
	assert.Equal(t, "Bearer k", auth)
	n, err = p.ContextLength(context.Background(), "b/big")
	require.NoError(t, err)
	assert.Equal(t, 262144, n)
	_, err = p.ContextLength(context.Background(), "c/none")
	assert.ErrorContains(t, err, "no context length")
	_, err = p.ContextLength(context.Background(), "zz/missing")
	assert.Error(t, err)

	p404 := NewOpenRouter(OpenRouterConfig{BaseURL: srv.URL + "/other"})
	_, err = p404.ContextLength(context.Background(), "a/small")
	assert.ErrorContains(t, err, "HTTP 404")
}

func TestSetContextBudgetApplies(t *testing.T) {
	s, _ := newTestSession(t, &scriptProvider{}, SessionConfig{})
	s.SetContextBudget(1234)
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Equal(t, 1234, s.budget())
	s.cfg.ContextBudget = -1
	assert.Equal(t, 0, s.budget(), "negative: never shrink")
	s.cfg.ContextBudget = 0
	assert.Equal(t, DefaultContextBudget, s.budget())
}
