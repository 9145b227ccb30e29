// Package openai is a [model.Provider] for OpenAI's Chat Completions API
// and the many servers that speak it: OpenAI itself, ollama, llama.cpp's
// llama-server, vLLM, LM Studio, DeepSeek, OpenRouter and other gateways.
//
// The agent loop speaks the Anthropic Messages format; this provider
// translates each [model.Request] into one streaming
// POST {BaseURL}/chat/completions call, turns the streamed chunks back into
// Messages API stream events for [model.Handler.Event], reports each
// completed content block to [model.Handler.Block], and returns the reply as
// a [model.Response]. The transport (client, base URL, authentication) is
// the official SDK, github.com/openai/openai-go/v3, with its retries off:
// the provider retries by itself. The request body and the stream reader
// are this package's own, as in the anthropic provider: the fields
// compatible servers add (reasoning_content, reasoning, error objects inside
// the stream, string error bodies) are read, and the body sent is exactly
// the one the tests pin.
//
// # Using it
//
// Plug it into a run through agentloop.Options.Provider:
//
//	p, err := openai.New(&openai.Options{Model: "gpt-5-mini"})
//	if err != nil {
//		return err
//	}
//	msgs, err := agentloop.Query(ctx, "List the Go files here", &agentloop.Options{
//		Provider: p,
//	}).Collect()
//
// The zero Options read OPENAI_API_KEY and OPENAI_BASE_URL. Options.Model
// matters: the loop asks for Anthropic model ids (its main model, and a small
// one for titles and other side tasks), and Model replaces every one of
// them; ModelMap maps single ids instead, e.g. the small model to a cheaper
// one.
//
// # A local model with ollama
//
// Start ollama, pull a model that supports tool calling, and point the
// provider at ollama's OpenAI-compatible endpoint. No key is needed:
// without one no Authorization header is sent.
//
//	ollama pull qwen3:8b
//
//	p, err := openai.New(&openai.Options{
//		BaseURL: "http://localhost:11434/v1",
//		Model:   "qwen3:8b",
//	})
//
// llama.cpp (llama-server --jinja, default http://localhost:8080/v1) and vLLM
// (vllm serve, default http://localhost:8000/v1) work the same way. From the
// command line, the same is
//
//	AGENTLOOP_PROVIDER=openai OPENAI_BASE_URL=http://localhost:11434/v1 \
//	  agentloop --model qwen3:8b -p "…"
//
// # Translation
//
// Requests: the system blocks become one system message; text turns stay
// text; tool_use blocks become the assistant's tool_calls (parallel calls
// kept, ids kept) and tool_result blocks become "tool" messages, a failed
// result's text prefixed with [ToolErrorPrefix] since the format has no error
// flag; base64 images become data URLs in image_url parts; thinking blocks
// are dropped (they were the server's own reasoning, which it does not want
// back); tools become function tools with their JSON schema; the token limit
// is sent as max_completion_tokens (max_tokens with
// Options.LegacyMaxTokens); the effort (Output.Effort) as reasoning_effort
// unless Options.NoReasoningEffort. Server tools of the Messages API (web
// search and the like) are not sent. Usage is asked for with
// stream_options.include_usage.
//
// Replies: text deltas stream as a text block; reasoning_content or
// reasoning deltas (vLLM, llama.cpp, DeepSeek, ollama) stream as a thinking
// block; tool calls, which servers may interleave by index, are gathered
// and reported as tool_use blocks after the text, each as one
// content_block_start, input_json_delta and content_block_stop. Arguments
// that are not a JSON object are passed on as {"invalid_arguments": text},
// so the tool rejects them and the model sees why. finish_reason maps to
// stop_reason: stop → end_turn, tool_calls → tool_use (also when the server
// says stop but sent tool calls), length → max_tokens, content_filter →
// refusal. Usage maps as prompt_tokens minus cached_tokens → input_tokens,
// cached_tokens → cache_read_input_tokens, completion_tokens →
// output_tokens. The message_start event carries zero usage (the format
// reports usage only at the end); message_delta carries the whole of it.
//
// A server that ignores "stream" and answers with one chat.completion
// object (Content-Type application/json) is read as if the reply had
// streamed in one piece; any other content type is a malformed stream.
//
// Structured output needs nothing from the provider: the loop asks for it
// through a tool.
//
// # The Responses API
//
// Options.API = [APIResponses] sends the same conversation to OpenAI's
// POST {BaseURL}/responses instead, with store false: the system prompt as
// instructions, tool calls and results as function_call and
// function_call_output items, the effort as reasoning.effort (with summary
// auto), the limit as max_output_tokens. Reasoning summaries stream back as
// a thinking block; response.completed carries the usage,
// response.incomplete the max_tokens or refusal stop, and response.failed
// is a stream error. Reasoning items are not sent back (without store they
// would need their encrypted content).
//
// A model that rejects the effort (a 400 that names reasoning_effort or
// reasoning.effort) gets the request again at once without it, and the
// provider leaves it out for that model from then on.
//
// # Retries and errors
//
// 429, 408, 409 and 5xx answers, connection errors, a stream that breaks and
// a stream that cannot be made sense of are retried up to MaxRetries times
// (default 10) after min(500ms × 2^(n−1), 32s) plus up to a quarter of
// jitter, or after the retry-after-ms or retry-after header when the answer
// carries one; [model.Handler.Retry] hears of each retry before the wait
// (an error object inside the stream is retried without one, as the
// anthropic provider does). 400, 401, 403, 404 and a 429 for
// insufficient_quota fail at once. When the provider gives up it returns a
// [*model.APIError] whose Type uses the Messages API's names
// (authentication_error, rate_limit_error, …), so its Kind reads as for the
// Anthropic provider; a malformed stream's error wraps
// [model.ErrMalformedStream]. Each attempt is bounded by
// Options.StreamIdleTimeout (default 5 minutes between events) and
// Options.Timeout (none by default); an attempt cut short fails with a
// [*TimeoutError]. Cancelling ctx stops a wait or a stream at once.
//
// # Cost
//
// The loop prices replies by model id; models it does not know cost 0.
package openai
