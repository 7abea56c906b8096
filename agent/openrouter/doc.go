// Package openrouter is Fido's model provider: it implements agent.Provider
// for OpenRouter and any other OpenAI-compatible chat-completions endpoint,
// and reads the endpoint's model list for /model.
//
// It owns its wire. Requests are encoded from typed structs built on
// go-openai's request types (openai.ChatCompletionRequest, Tool, ToolCall,
// ChatMessagePart) plus what OpenRouter adds as first-class fields:
// reasoning effort, reasoning and reasoning_details passed back,
// cache_control content parts and provider routing preferences; the head
// a conversation repeats (model, tool catalog) is encoded once. Nothing
// rewrites a body after it is marshalled. Requests go out through net/http
// over HTTP/1.1 (NewTransport: HTTP/2 costs a stream a wakeup per frame);
// the answer is read by an event-stream reader built for this stream (one
// data line is one chunk; comments, keep-alives and [DONE] are understood;
// lines and answers are capped). The common chunk (one delta of text) is
// read in one pass without allocating (scan.go); the others are parsed
// with gjson. Text is handed on coalesced, one delta per read of the
// network, and a reader that has caught up with a slow stream reads it at
// most once per Config.ReadPace (body.go), its socket told meanwhile to
// wake no one for the pieces arriving (SO_RCVLOWAT on Linux, quiet_linux.go).
// The model list is decoded into go-openai's openai.Model extended with
// OpenRouter's context length, prices and supported parameters.
//
// Retries (with DeltaStatus notes), the idle watchdog, error wording and
// key redaction live here too; the agent package sees none of it, only
// agent.Provider and agent.ModelLister.
package openrouter
