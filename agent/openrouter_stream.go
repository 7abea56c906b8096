package agent

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// streamAccumulator turns raw chunks into deltas and, at the end, one
// assistant message. It is used by one goroutine.
type streamAccumulator struct {
	onDelta   func(Delta)
	delivered bool

	id           string
	content      strings.Builder
	reasoning    strings.Builder
	details      []*reasoningDetail
	calls        []*toolCallAcc
	byIndex      map[int]int
	current      int
	finishReason string
	usage        Usage
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

func newStreamAccumulator(onDelta func(Delta)) *streamAccumulator {
	return &streamAccumulator{onDelta: onDelta, byIndex: map[int]int{}, current: -1, usage: Usage{Calls: 1}}
}

func (a *streamAccumulator) emit(d Delta) {
	a.delivered = true
	a.onDelta(d)
}

// chunk handles one data payload; a non-nil result is an error the chunk carried.
func (a *streamAccumulator) chunk(raw []byte) *ProviderError {
	root := gjson.ParseBytes(raw)
	if e := root.Get("error"); e.Exists() && e.Type != gjson.Null {
		return streamError(e)
	}
	if a.id == "" {
		a.id = root.Get("id").String()
	}
	if u := root.Get("usage"); u.IsObject() {
		a.usage = Usage{
			Calls:     1,
			Input:     u.Get("prompt_tokens").Int(),
			Output:    u.Get("completion_tokens").Int(),
			CacheRead: u.Get("prompt_tokens_details.cached_tokens").Int(),
			CacheWrite: max(u.Get("prompt_tokens_details.cache_write_tokens").Int(),
				u.Get("cache_write_tokens").Int(), u.Get("prompt_tokens_details.cache_creation_input_tokens").Int()),
			Cost: u.Get("cost").Float(),
		}
	}
	choice := root.Get("choices.0")
	if !choice.Exists() {
		return nil
	}
	delta := choice.Get("delta")

	text := delta.Get("reasoning").String()
	if text == "" {
		text = delta.Get("reasoning_content").String()
	}
	if rd := delta.Get("reasoning_details"); rd.IsArray() {
		shown := a.addDetails(rd)
		if text == "" {
			text = shown
		}
	}
	if text != "" {
		a.reasoning.WriteString(text)
		a.emit(Delta{Kind: DeltaReasoning, Text: text})
	}
	if c := delta.Get("content").String(); c != "" {
		a.content.WriteString(c)
		a.emit(Delta{Kind: DeltaContent, Text: c})
	}
	if tcs := delta.Get("tool_calls"); tcs.IsArray() {
		for _, tc := range tcs.Array() {
			a.toolFragment(tc)
		}
	}
	if fr := choice.Get("finish_reason"); fr.Type == gjson.String && fr.Str != "" {
		a.finishReason = fr.Str
	}
	return nil
}

// addDetails accumulates reasoning_details and returns their displayable text.
func (a *streamAccumulator) addDetails(rd gjson.Result) string {
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

func (a *streamAccumulator) lastTextDetail() *reasoningDetail {
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

func (a *streamAccumulator) toolFragment(tc gjson.Result) {
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
	d := Delta{Kind: DeltaToolCall, ToolIndex: slot, Text: args}
	if !c.announced && c.name != "" {
		c.announced = true
		d.ToolName = c.name
	}
	if d.ToolName != "" || args != "" {
		a.emit(d)
	}
}

func (a *streamAccumulator) newCall() int {
	a.calls = append(a.calls, &toolCallAcc{})
	return len(a.calls) - 1
}

// response builds the final result. Tool calls present means tool calls,
// whatever finish_reason said (some models send "stop" after them).
func (a *streamAccumulator) response(genID string) Response {
	msg := Message{Role: RoleAssistant, Content: a.content.String(), Reasoning: a.reasoning.String()}
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
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: id, Name: c.name, Arguments: nonEmptyArgs(c.args.String())})
	}
	fr := a.finishReason
	switch {
	case len(msg.ToolCalls) > 0:
		fr = "tool_calls"
	case fr == "":
		fr = "stop"
	}
	return Response{Message: msg, FinishReason: fr, Usage: a.usage, GenerationID: genID}
}

// transientStreamCodes are mid-stream error codes worth a retry.
var transientStreamCodes = map[string]bool{
	"server_error": true, "internal_error": true, "overloaded_error": true, "api_error": true,
	"rate_limit_error": true, "timeout": true, "overloaded": true,
}

// streamError words an error object that arrived inside a 200 stream.
func streamError(e gjson.Result) *ProviderError {
	code := e.Get("code").String()
	msg := e.Get("message").String()
	if msg == "" && e.Type == gjson.String {
		msg = e.Str
	}
	if raw := e.Get("metadata.raw").String(); raw != "" && raw != msg {
		msg = strings.TrimSpace(msg + " — " + raw)
	}
	if msg == "" {
		msg = "unknown error"
	}
	retry := transientStreamCodes[code]
	if n, err := strconv.Atoi(code); err == nil {
		retry = n == 408 || n == 409 || n == 429 || n >= 500
	}
	msg = clip(oneLine(msg), 240)
	if code != "" {
		msg += " (" + code + ")"
	}
	return &ProviderError{Code: code, Message: msg, Retryable: retry}
}
