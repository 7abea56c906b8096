package openrouter

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/agent"
)

// chunkSeeds are chunks as OpenRouter and other OpenAI-compatible servers
// send them, and the odd ones the scanner must leave to gjson.
var chunkSeeds = []string{
	`{"id":"gen-1","provider":"OpenAI","model":"m","object":"chat.completion.chunk","created":1,"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}`,
	`{"id":"gen-1","choices":[{"index":0,"delta":{"content":"line\nnext \"quoted\" \\ tab\t\u00e9\ud83d\ude00 \u002f"},"finish_reason":null}]}`,
	`{"id":"gen-1","choices":[{"index":0,"delta":{"content":"","reasoning":"let me think"},"finish_reason":null}]}`,
	`{"id":"gen-1","choices":[{"index":0,"delta":{"reasoning":null,"reasoning_content":"deep"}}]}`,
	`{"id":"gen-1","choices":[{"index":0,"delta":{"reasoning":"","reasoning_content":"deep","content":"x"}}]}`,
	`{"id":"gen-1","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop","native_finish_reason":"STOP"}]}`,
	`{"id":"gen-1","choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":3},"cost":0.5}}`,
	`{"id":"gen-1","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"cost":0.001}}`,
	`{"id":"gen-1","choices":null}`,
	` { "id" : "gen-2" , "choices" : [ { "delta" : { "content" : "spaced" } , "finish_reason" : "stop" } ] } `,
	`{"choices":[{"finish_reason":"tool_calls","index":0,"delta":{"content":"a"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"second choice"}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"read_file","arguments":"{\"pa"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning":"r","reasoning_details":[{"type":"reasoning.text","text":"r","index":0}]}}]}`,
	`{"id":"gen-1","error":{"code":502,"message":"Upstream error"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`,
	`{"error":null,"choices":[{"delta":{"content":"fine"}}]}`,
	`{"choices":[{"delta":{"content":"a","content":"b"}}]}`,
	`{"choices":[{"delta":{"content":5}}]}`,
	`{"choices":[{"delta":{"con\u0074ent":"escaped key"}}]}`,
	`{"choices":[{"delta":null,"finish_reason":"stop"}]}`,
	`{"choices":[{"delta":"odd"}]}`,
	`{"choices":{"0":{"delta":{"content":"not an array"}}}}`,
	`{"choices":[null]}`,
	`{"choices":[{"delta":{"content":"bad \x escape"}}]}`,
	`{"choices":[{"delta":{"content":"lone \ud800 surrogate"}}]}`,
	`{"id":7,"choices":[{"delta":{"content":"numeric id"}}]}`,
	`{"usage":"n/a","choices":[{"delta":{"content":"odd usage"}}]}`,
	`{"choices":[{"delta":{"content":"a"}}]} trailing`,
	`{"choices":[{"delta":{"content":"unterminated}}]}`,
	`[1,2,3]`,
	`"just a string"`,
	``,
}

// readChunks reads chunks in order with one accumulator, through the
// scanner or (gjsonOnly) the way every chunk was read before it.
func readChunks(chunks []string, gjsonOnly bool) (agent.Response, []agent.Delta, *agent.ProviderError, string) {
	var got []agent.Delta
	a := newAccumulator(func(d agent.Delta) { got = append(got, d) })
	var perr *agent.ProviderError
	for _, c := range chunks {
		if gjsonOnly {
			perr = a.chunkGJSON([]byte(c), false)
		} else {
			perr = a.chunk([]byte(c), false)
		}
		if perr != nil {
			break
		}
	}
	a.flush()
	return a.response("gen"), got, perr, a.id
}

// The scanner reads every chunk as gjson does: the same text, reasoning,
// finish reason, usage, id and error. Each chunk is read alone, and after
// chunks whose envelope it may share (which the scanner then skips).
func TestScannerAgreesWithGJSON(t *testing.T) {
	for _, chunk := range chunkSeeds {
		checkAgreement(t, chunk)
	}
}

func checkAgreement(t *testing.T, chunk string) {
	t.Helper()
	for _, before := range [][]string{nil, {chunkSeeds[0]}, {chunkSeeds[1], chunkSeeds[0]}, {chunkSeeds[9]}, {`{"choices":[{"delta":{"content":"no envelope"}}]}`}} {
		chunks := append(append([]string(nil), before...), chunk)
		wantResp, wantDeltas, wantErr, wantID := readChunks(chunks, true)
		resp, deltas, perr, id := readChunks(chunks, false)
		assert.Equal(t, wantResp, resp, chunks)
		assert.Equal(t, wantDeltas, deltas, chunks)
		assert.Equal(t, wantErr, perr, chunks)
		assert.Equal(t, wantID, id, chunks)
	}
}

// A stream's chunks repeat their envelope; from the second chunk on the
// scanner reads only what follows it.
func TestScannerSkipsTheRepeatedEnvelope(t *testing.T) {
	var f chunkFields
	var env envelope
	first := `{"id":"gen-1","provider":"P","model":"m","object":"chat.completion.chunk","created":1,"choices":[{"index":0,"delta":{"content":"a"}}]}`
	require.True(t, scanChunk([]byte(first), &f, &env))
	assert.Equal(t, `{"id":"gen-1","provider":"P","model":"m","object":"chat.completion.chunk","created":1,`, string(env.prefix))
	assert.Equal(t, `"gen-1"`, string(f.id))
	next := `{"id":"gen-1","provider":"P","model":"m","object":"chat.completion.chunk","created":1,"choices":[{"index":0,"delta":{"content":"b"}}],"usage":{"cost":1}}`
	require.True(t, scanChunk([]byte(next), &f, &env))
	assert.Nil(t, f.id, "the envelope was skipped")
	assert.Equal(t, `"b"`, string(f.content))
	assert.Equal(t, `{"cost":1}`, string(f.usage))
	// An envelope holding a key the accumulator reads is not remembered.
	env = envelope{}
	require.True(t, scanChunk([]byte(`{"usage":{"cost":1},"choices":[]}`), &f, &env))
	assert.Empty(t, env.prefix)
}

// The common chunks are read by the scanner itself, not handed to gjson.
func TestScannerReadsCommonChunks(t *testing.T) {
	var f chunkFields
	a := newAccumulator(func(agent.Delta) {})
	for _, chunk := range chunkSeeds[:11] {
		require.True(t, scanChunk([]byte(chunk), &f, nil), chunk)
		require.True(t, a.scanned(&f), chunk)
	}
	for _, chunk := range []string{`{"choices":[{"delta":{"content":"a","content":"b"}}]}`, `[1,2,3]`, ``, `{"choices":[{"delta":{"content":"unterminated}}]}`} {
		assert.False(t, scanChunk([]byte(chunk), &f, nil), chunk)
	}
}

// A chunk that carries nothing but a delta costs no allocation.
func TestScannerDoesNotAllocate(t *testing.T) {
	chunk := []byte(chunkSeeds[0])
	a := newAccumulator(func(agent.Delta) {})
	a.content = make([]byte, 0, 1<<20)
	allocs := testing.AllocsPerRun(1000, func() {
		if perr := a.chunk(chunk, false); perr != nil {
			t.Fatal(perr)
		}
	})
	assert.Zero(t, allocs)
}

func FuzzScannerAgreesWithGJSON(f *testing.F) {
	for _, c := range chunkSeeds {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, chunk string) {
		checkAgreement(t, chunk)
	})
}

// appendString decodes JSON strings as encoding/json does.
func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", `a\"b`, `\\`, `\/`, `\b\f\n\r\t`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `\ud800x`, `\udc00\ud800`, `\ud83dabc`, `\ud83d\u0041`, `tail\u0041`} {
		checkAppendString(t, `"`+s+`"`)
	}
	for _, bad := range []string{`"\x"`, `"\u12"`, `"\u12g4"`, `"\"`, `"a\` + `"`} {
		_, ok := appendString(nil, []byte(bad))
		assert.False(t, ok, bad)
		assert.False(t, validEscapes([]byte(bad)), bad)
	}
}

func checkAppendString(t *testing.T, quoted string) {
	t.Helper()
	var want string
	if err := json.Unmarshal([]byte(quoted), &want); err != nil || strings.TrimSpace(quoted) != quoted {
		return // not exactly one JSON string: the scanner hands out no such value
	}
	got, ok := appendString(nil, []byte(quoted))
	require.True(t, ok, quoted)
	require.True(t, validEscapes([]byte(quoted)), quoted)
	assert.Equal(t, want, string(got), quoted)
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{`"a\nb"`, `"\ud83d\ude00"`, `"\ud800"`, `"é"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || !strings.HasPrefix(s, `"`) {
			return
		}
		checkAppendString(t, s)
	})
}
