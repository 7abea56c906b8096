package openrouter

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/fido-nvim/fido/agent"
)

// accumulator turns chunks into deltas and, at the end, one assistant
// message. It is used by one goroutine.
//
// Streamed text is handed on coalesced: consecutive pieces of one kind
// (answer or reasoning) wait in the answer's own buffer until flush, which
// the provider calls before every read from the network (and at the end).
// A stream that arrives a piece at a time thus still shows each piece at
// once, while a read that brings a thousand chunks makes one delta, not a
// thousand.
type accumulator struct {
	onDelta   func(agent.Delta)
	delivered bool

	id        string
	content   []byte
	reasoning []byte
	// pending says text of pendingKind from pendingFrom on (in content or
	// reasoning) has not reached onDelta yet.
	pending     bool
	pendingKind agent.DeltaKind
	pendingFrom int

	details      []*reasoningDetail
	calls        []*toolCallAcc
	byIndex      map[int]int
	current      int
	finishReason string
	usage        agent.Usage
	fields       chunkFields
	envelope     envelope
}

type toolCallAcc struct {
	id, name  string
	args      strings.Builder
	announced bool
}

// reasoningDetail is one reasoning_details entry. Consecutive reasoning.text
// fragments of one block are merged (text appended, first signature kept);
// every other entry stays byte-for-byte as received.
type reasoningDetail struct {
	raw    json.RawMessage
	fields map[string]json.RawMessage // only for merged text entries
	text   strings.Builder
}

func newAccumulator(onDelta func(agent.Delta)) *accumulator {
	return &accumulator{onDelta: onDelta, byIndex: map[int]int{}, current: -1, usage: agent.Usage{Calls: 1}}
}

// emit hands on a delta other than streamed text, after the text before it.
func (a *accumulator) emit(d agent.Delta) {
	a.flush()
	a.delivered = true
	a.onDelta(d)
}

// text adds streamed text of kind (DeltaContent or DeltaReasoning).
func (a *accumulator) text(kind agent.DeltaKind, b []byte) {
	buf := a.buffer(kind)
	from := len(*buf)
	*buf = append(roomFor(*buf, len(b)), b...)
	a.added(kind, from)
}

// roomFor returns buf with room for n more bytes, doubling its capacity
// when it must grow (append grows a large slice by a quarter, so a 100 KB
// answer would be copied some twenty times into fresh memory).
func roomFor(buf []byte, n int) []byte {
	if len(buf)+n <= cap(buf) {
		return buf
	}
	grown := make([]byte, len(buf), max(2*cap(buf), len(buf)+n, 512))
	copy(grown, buf)
	return grown
}

// added notes that text of kind was appended to its buffer from index from.
func (a *accumulator) added(kind agent.DeltaKind, from int) {
	if from == len(*a.buffer(kind)) {
		return
	}
	if a.pending && a.pendingKind != kind {
		a.flush()
	}
	if !a.pending {
		a.pending, a.pendingKind, a.pendingFrom = true, kind, from
	}
	a.delivered = true
}

// buffer is where text of kind is kept.
func (a *accumulator) buffer(kind agent.DeltaKind) *[]byte {
	if kind == agent.DeltaReasoning {
		return &a.reasoning
	}
	return &a.content
}

// flush hands on the text that waits, as one delta.
func (a *accumulator) flush() {
	if !a.pending {
		return
	}
	a.pending = false
	a.onDelta(agent.Delta{Kind: a.pendingKind, Text: string((*a.buffer(a.pendingKind))[a.pendingFrom:])})
}

// chunk handles one data payload (valid only during the call); a non-nil
// result is an error the chunk carried. errorEvent says the payload came as
// `event: error`.
//
// Most chunks carry one small delta and nothing else: scanChunk reads them
// in one pass without allocating (skipping the envelope the stream repeats),
// and their text is decoded straight into the answer's buffer. Everything
// else (tool calls, reasoning details, errors, odd values) is read by
// chunkGJSON.
func (a *accumulator) chunk(payload []byte, errorEvent bool) *agent.ProviderError {
	if !errorEvent && scanChunk(payload, &a.fields, &a.envelope) && a.scanned(&a.fields) {
		return nil
	}
	return a.chunkGJSON(payload, errorEvent)
}

// scanned handles a chunk read by scanChunk and reports true, or reports
// false having changed nothing when a part of it is for gjson to read
// (tool calls, reasoning details, a value of an unexpected type, an
// escape it cannot decode).
func (a *accumulator) scanned(f *chunkFields) bool {
	if !isNull(f.error) {
		return false // an error report: rare, read by gjson
	}
	for _, v := range [][]byte{f.id, f.finish, f.content, f.reasoning, f.reasoningContent} {
		if !isNull(v) && !isString(v) {
			return false
		}
	}
	if !isNull(f.delta) && f.delta[0] != '{' || !isNull(f.details) || !isNull(f.toolCalls) {
		return false
	}
	if !isNull(f.usage) && f.usage[0] != '{' {
		return false
	}
	text := f.reasoning
	if isNull(text) || string(text) == `""` {
		text = f.reasoningContent
	}
	// A bad escape sends the chunk to gjson before anything has changed.
	if !isNull(text) && !validEscapes(text) || !isNull(f.content) && !validEscapes(f.content) {
		return false
	}
	if a.id == "" && isString(f.id) {
		id, _ := appendString(nil, f.id)
		a.id = string(id)
	}
	if !isNull(f.usage) {
		a.setUsage(gjson.ParseBytes(f.usage))
	}
	// Reasoning first, then the answer: each decoded into its buffer and
	// handed on from there.
	if !isNull(text) {
		from := len(a.reasoning)
		a.reasoning, _ = appendString(roomFor(a.reasoning, len(text)), text)
		a.added(agent.DeltaReasoning, from)
	}
	if !isNull(f.content) {
		from := len(a.content)
		a.content, _ = appendString(roomFor(a.content, len(f.content)), f.content)
		a.added(agent.DeltaContent, from)
	}
	if isString(f.finish) && len(f.finish) > 2 {
		fr, _ := appendString(nil, f.finish)
		a.finishReason = string(fr)
	}
	return true
}

// chunkGJSON reads a chunk with gjson: the way for every chunk scanChunk
// leaves alone. The delta is fetched by path, and the rest of the chunk is
// parsed only when a substring search shows a key that matters (error,
// usage, a finish reason that is a string; in compact chunks a null
// finish_reason right after the delta spares the last search).
func (a *accumulator) chunkGJSON(payload []byte, errorEvent bool) *agent.ProviderError {
	if errorEvent || bytes.Contains(payload, errorMark) {
		if e := gjson.GetBytes(payload, "error"); e.Exists() && e.Type != gjson.Null {
			return streamError(e)
		}
		if errorEvent {
			return streamError(gjson.ParseBytes(payload))
		}
	}
	if a.id == "" {
		a.id = gjson.GetBytes(payload, "id").String()
	}
	if bytes.Contains(payload, usageMark) {
		if u := gjson.GetBytes(payload, "usage"); u.IsObject() {
			a.setUsage(u)
		}
	}
	delta := gjson.GetBytes(payload, "choices.0.delta")
	if nullFinishAfter(payload, delta) || !hasStringValue(payload, finishMark) {
		// No finish reason in this chunk: the delta is all there is.
		if delta.IsObject() {
			a.delta(delta)
		}
		return nil
	}
	choice := gjson.GetBytes(payload, "choices.0")
	if delta := choice.Get("delta"); delta.IsObject() {
		a.delta(delta)
	}
	if finish := choice.Get("finish_reason"); finish.Type == gjson.String && finish.Str != "" {
		a.finishReason = finish.Str
	}
	return nil
}

// Substrings that reveal the keys "error" and "usage" and a key ending in
// "finish_reason" (finish_reason, native_finish_reason). Each starts with a
// byte that is rare in a chunk, so the search skips ahead quickly; a match
// only leads to a gjson lookup, which decides.
var (
	errorMark  = []byte(`rror"`)
	usageMark  = []byte(`usage"`)
	finishMark = []byte(`h_reason"`)
)

// nullFinish is how compact chunks (OpenRouter's, OpenAI's) go on after
// the delta when they carry no finish reason.
var nullFinish = []byte(`,"finish_reason":null`)

// nullFinishAfter reports that the delta found in payload is directly
// followed by a null finish_reason: then the choice has none, and the
// search for one can be skipped.
func nullFinishAfter(payload []byte, delta gjson.Result) bool {
	end := delta.Index + len(delta.Raw)
	return delta.Index > 0 && end <= len(payload) && bytes.HasPrefix(payload[end:], nullFinish)
}

// hasStringValue reports whether some occurrence of key in a JSON text is a
// key whose value is a string (key, optional white space, colon, optional
// white space, quote).
func hasStringValue(raw, key []byte) bool {
	for {
		i := bytes.Index(raw, key)
		if i < 0 {
			return false
		}
		raw = skipJSONSpace(raw[i+len(key):])
		if len(raw) > 0 && raw[0] == ':' {
			if v := skipJSONSpace(raw[1:]); len(v) > 0 && v[0] == '"' {
				return true
			}
		}
	}
}

func skipJSONSpace(b []byte) []byte {
	for len(b) > 0 && isJSONSpace(b[0]) {
		b = b[1:]
	}
	return b
}

// delta handles a choice's delta: reasoning first, then content, then tool
// calls, whatever the order of the keys.
func (a *accumulator) delta(delta gjson.Result) {
	var content, reasoning, reasoningContent, details, toolCalls gjson.Result
	delta.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "content":
			content = v
		case "reasoning":
			reasoning = v
		case "reasoning_content":
			reasoningContent = v
		case "reasoning_details":
			details = v
		case "tool_calls":
			toolCalls = v
		}
		return true
	})
	text := reasoning.String()
	if text == "" {
		text = reasoningContent.String()
	}
	if details.IsArray() {
		shown := a.addDetails(details)
		if text == "" {
			text = shown
		}
	}
	a.text(agent.DeltaReasoning, []byte(text))
	a.text(agent.DeltaContent, []byte(content.String()))
	if toolCalls.IsArray() {
		toolCalls.ForEach(func(_, tc gjson.Result) bool {
			a.toolFragment(tc)
			return true
		})
	}
}

// setUsage reads the usage object, with the cache writes under any of the
// names upstreams use for them.
func (a *accumulator) setUsage(u gjson.Result) {
	a.usage = agent.Usage{
		Calls:     1,
		Input:     u.Get("prompt_tokens").Int(),
		Output:    u.Get("completion_tokens").Int(),
		CacheRead: u.Get("prompt_tokens_details.cached_tokens").Int(),
		CacheWrite: max(u.Get("prompt_tokens_details.cache_write_tokens").Int(),
			u.Get("cache_write_tokens").Int(), u.Get("prompt_tokens_details.cache_creation_input_tokens").Int()),
		Cost: u.Get("cost").Float(),
	}
}

// addDetails accumulates reasoning_details and returns their displayable text.
func (a *accumulator) addDetails(rd gjson.Result) string {
	var shown strings.Builder
	for _, d := range rd.Array() {
		if !d.IsObject() {
			continue
		}
		switch d.Get("type").String() {
		case "reasoning.text":
			t := d.Get("text").String()
			shown.WriteString(t)
			if last := a.lastTextDetail(); last != nil && sameBlock(last, d) {
				last.text.WriteString(t)
				for _, k := range []string{"signature", "format", "id"} {
					if v := d.Get(k); v.Exists() && v.Type != gjson.Null && v.String() != "" {
						if cur, ok := last.fields[k]; !ok || string(cur) == "null" || string(cur) == `""` {
							last.fields[k] = json.RawMessage(v.Raw)
						}
					}
				}
				continue
			}
			nd := &reasoningDetail{fields: map[string]json.RawMessage{}}
			d.ForEach(func(k, v gjson.Result) bool {
				nd.fields[k.String()] = json.RawMessage(v.Raw)
				return true
			})
			nd.text.WriteString(t)
			a.details = append(a.details, nd)
		case "reasoning.summary":
			shown.WriteString(d.Get("summary").String())
			a.details = append(a.details, &reasoningDetail{raw: json.RawMessage(d.Raw)})
		default:
			a.details = append(a.details, &reasoningDetail{raw: json.RawMessage(d.Raw)})
		}
	}
	return shown.String()
}

func (a *accumulator) lastTextDetail() *reasoningDetail {
	if len(a.details) == 0 || a.details[len(a.details)-1].fields == nil {
		return nil
	}
	return a.details[len(a.details)-1]
}

// sameBlock: a text fragment continues the previous one unless both carry
// different indexes (two thinking blocks, each with its own signature).
func sameBlock(last *reasoningDetail, d gjson.Result) bool {
	li, ok := last.fields["index"]
	di := d.Get("index")
	if !ok || !di.Exists() {
		return true
	}
	return string(li) == di.Raw
}

// toolFragment adds one tool_calls entry: calls are told apart by index,
// and by id where an upstream reuses an index or sends none.
func (a *accumulator) toolFragment(tc gjson.Result) {
	id := tc.Get("id").String()
	name := tc.Get("function.name").String()
	args := tc.Get("function.arguments").String()
	slot := -1
	if idx := tc.Get("index"); idx.Exists() && idx.Type == gjson.Number && idx.Int() >= 0 {
		k := int(idx.Int())
		if s, ok := a.byIndex[k]; ok && !(id != "" && a.calls[s].id != "" && id != a.calls[s].id) {
			slot = s
		} else {
			slot = a.newCall()
			a.byIndex[k] = slot
		}
	} else if a.current >= 0 && !(id != "" && a.calls[a.current].id != "" && id != a.calls[a.current].id) {
		// index -1 or missing (seen from some OpenRouter upstreams): the current call.
		slot = a.current
	} else {
		slot = a.newCall()
	}
	a.current = slot
	c := a.calls[slot]
	if c.id == "" {
		c.id = id
	}
	if c.name == "" {
		c.name = name
	}
	c.args.WriteString(args)
	d := agent.Delta{Kind: agent.DeltaToolCall, ToolIndex: slot, Text: args}
	if !c.announced && c.name != "" {
		c.announced = true
		d.ToolName = c.name
	}
	if d.ToolName != "" || args != "" {
		a.emit(d)
	}
}

func (a *accumulator) newCall() int {
	a.calls = append(a.calls, &toolCallAcc{})
	return len(a.calls) - 1
}

// response builds the final result. Tool calls present means tool calls,
// whatever finish_reason said (some models send "stop" after them).
func (a *accumulator) response(genID string) agent.Response {
	msg := agent.Message{Role: agent.RoleAssistant, Content: string(a.content), Reasoning: string(a.reasoning)}
	if len(a.details) > 0 {
		parts := make([]json.RawMessage, len(a.details))
		for i, d := range a.details {
			if d.fields == nil {
				parts[i] = d.raw
				continue
			}
			d.fields["text"], _ = json.Marshal(d.text.String())
			parts[i], _ = marshalNoEscape(d.fields)
		}
		msg.ReasoningDetails, _ = marshalNoEscape(parts)
	}
	for i, c := range a.calls {
		id := c.id
		if id == "" {
			id = "call_" + strconv.Itoa(i)
			if genID != "" {
				id = "call_" + genID + "_" + strconv.Itoa(i)
			}
		}
		msg.ToolCalls = append(msg.ToolCalls, agent.ToolCall{ID: id, Name: c.name, Arguments: nonEmptyArgs(c.args.String())})
	}
	fr := a.finishReason
	switch {
	case len(msg.ToolCalls) > 0:
		fr = "tool_calls"
	case fr == "":
		fr = "stop"
	}
	return agent.Response{Message: msg, FinishReason: fr, Usage: a.usage, GenerationID: genID}
}
