// Package openrouter is Fido's model provider: it implements agent.Provider
// for OpenRouter and any other OpenAI-compatible chat-completions endpoint,
// and reads the endpoint's model list for /model.
//
// It owns its wire. Requests are encoded once from typed structs built on
// go-openai's request types (openai.ChatCompletionRequest, Tool, ToolCall,
// ChatMessagePart) plus what OpenRouter adds as first-class fields:
// reasoning effort, reasoning and reasoning_details passed back,
// cache_control content parts and provider routing preferences. Nothing
// rewrites a body after it is marshalled. Requests go out through net/http;
// the answer is read by an event-stream reader built for this stream (one
// data line is one chunk; comments, keep-alives and [DONE] are understood;
// lines and answers are capped) and each chunk is parsed once with gjson.
// The model list is decoded into go-openai's openai.Model extended with
// OpenRouter's context length, prices and supported parameters.
//
// Retries (with DeltaStatus notes), the idle watchdog, error wording and
// key redaction live here too; the agent package sees none of it, only
// agent.Provider and agent.ModelLister.
package openrouter
