package openrouter

import (
	"context"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
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
	p := New(Config{BaseURL: srv.URL + "/api/v1", APIKey: "k"})
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

	p404 := New(Config{BaseURL: srv.URL + "/other"})
	_, err = p404.ContextLength(context.Background(), "a/small")
	assert.ErrorContains(t, err, "HTTP 404")
}

// The list decodes into go-openai's model with OpenRouter's fields: window
// (or the top provider's), prices as strings or numbers (per million
// tokens; -1 when not listed), tool support. An entry that does not decode
// is left out; a body that is no list is an error.
func TestModelsList(t *testing.T) {
	body := `{"data":[
	  {"id":"a/tools","created":1700000000,"owned_by":"a","context_length":131072,
	   "pricing":{"prompt":"0.000003","completion":"0.000015"},"supported_parameters":["temperature","tools"]},
	  {"id":"b/numbers","top_provider":{"context_length":32000},"pricing":{"prompt":0.0000005,"completion":null}},
	  {"id":"c/bad","context_length":"many"},
	  {"object":"model"},
	  {"id":"d/plain"}]}`
	var header http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header = r.Header.Clone()
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	list, err := New(Config{BaseURL: srv.URL + "/api/v1", APIKey: "k"}).Models(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []agent.ModelInfo{
		{ID: "a/tools", Context: 131072, PromptPrice: 3, CompletionPrice: 15, Tools: true},
		{ID: "b/numbers", Context: 32000, PromptPrice: 0.5, CompletionPrice: -1},
		{ID: "d/plain", PromptPrice: -1, CompletionPrice: -1},
	}, roundPrices(list))
	assert.Equal(t, "Bearer k", header.Get("Authorization"))
	assert.Equal(t, "Fido", header.Get("X-Title"))

	body = `<html>not a list</html>`
	_, err = New(Config{BaseURL: srv.URL}).Models(context.Background())
	assert.ErrorContains(t, err, "model list: not a model list")
}

// roundPrices removes float noise from prices per million tokens.
func roundPrices(list []agent.ModelInfo) []agent.ModelInfo {
	for i := range list {
		list[i].PromptPrice = math.Round(list[i].PromptPrice*1e6) / 1e6
		list[i].CompletionPrice = math.Round(list[i].CompletionPrice*1e6) / 1e6
	}
	return list
}

// A server without a model list (404) keeps its connection: the first
// model call after the list at start does not dial again.
func TestModelListErrorKeepsTheConnection(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, strings.Repeat("no model list here ", 100), http.StatusNotFound)
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	p := New(Config{BaseURL: srv.URL, APIKey: testKey})
	for range 3 {
		_, err := p.Models(context.Background())
		require.ErrorContains(t, err, "HTTP 404")
	}
	assert.Equal(t, int32(1), conns.Load())
}
