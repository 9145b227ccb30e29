// Package agentlooptest provides a scripted fake of the Anthropic Messages
// API for tests: what net/http/httptest is to HTTP handlers, this package is
// to code that talks to a model.
//
// A [Server] listens on a loopback address and answers POST /v1/messages
// with the replies of a script, in the API's real wire format: a stream of
// server-sent events (message_start, ping, content_block_start,
// content_block_delta…, content_block_stop, message_delta, message_stop)
// when the request asks to stream, one JSON message otherwise. It records
// every request, so a test can check what the client sent. It also answers
// POST /v1/messages/count_tokens with a deterministic estimate, the body's
// length in bytes divided by 4 (at least 1), recorded with Kind
// [KindCountTokens] in [Server.AllRequests], and GET /v1/models with an
// empty list; anything else gets a 404 error body.
//
// # Scripting turns
//
// A script is a queue of [Reply] values, one per model turn, consumed in
// order by the requests that arrive:
//
//	s := agentlooptest.NewTB(t,
//		agentlooptest.ToolUse("toolu_1", "Read", map[string]any{"file_path": "/tmp/a"}),
//		agentlooptest.Text("The file says hello."),
//	)
//	// point the client under test at s.URL (e.g. ANTHROPIC_BASE_URL),
//	// or give agentloop s.Provider() as Options.Provider
//
// The first request gets a tool_use block (stop reason "tool_use"), the
// second the text (stop reason "end_turn"). Requests that find the queue
// empty get "(script exhausted)"; see [Server.SetExhausted]. Replies can be
// added while the test runs with [Server.Push].
//
// [Blocks] builds a reply of several blocks (parallel tool calls, text
// before a call, thinking); [Thinking] puts a thinking block before a reply.
// Every field of Reply has a useful default; set fields to script usage,
// stop reasons, models, latency ([Reply.Delay], [Reply.EventDelay]) and
// delta sizes ([Reply.Chunk]).
//
// Failures are replies too: [Error], [Overloaded], [ServerError] and
// [RateLimited] answer an HTTP error (with [Reply.Header] for retry-after);
// [ErrorEvent] fails a stream after message_start; [Reply.CutAfter] closes
// the connection in the middle of a stream; [Reply.StallAfter] leaves it
// open and silent; [Reply.Delay] holds back even the response headers;
// [Reply.RawSSE] sends any bytes you like as the stream.
//
// Requests that must not consume the main queue, such as a subagent's or a
// helper call's, can be answered by rules with their own queues
// ([Server.Route]) or by a function ([Server.SetRouter]).
//
// # Asserting on requests
//
// [Server.Requests] returns every messages request in order, and
// [Server.LastRequest] the last one. A [Request] keeps the raw body and
// headers and the decoded parameters (a [model.Request]), with helpers for
// the common checks:
//
//	req := s.Requests()[1]
//	res, ok := req.ToolResult("toolu_1") // the tool result the client sent back
//	if !ok || res.ResultText() != "hello" { t.Errorf(…) }
//	if !req.HasCacheControlOnLastBlock() { t.Error("no cache breakpoint") }
//
// A reply can also check the request it answers, through [Reply.Expect];
// failures are collected in [Server.Mismatches], which [NewTB] reports when
// the test ends.
//
// # Strict by default
//
// Like the real API, the server rejects a conversation the API rejects
// ([ValidateHistory]: a user message first, no empty messages or text
// blocks, unique tool_use ids, every tool_use answered by a tool_result
// opening the next turn, no tool_result for another turn's call;
// [ValidateToolReferences]: a tool_reference names a declared tool and
// sits in a tool_result). Such a request gets the API's 400
// invalid_request_error, consumes no reply and is recorded in
// [Server.Mismatches] as a [HistoryError]. [NewTB] fails the test on
// every mismatch and on every request that found its script
// exhausted; a test that means either calls [Server.AllowInvalidHistory] or
// [Server.AllowExhausted]. [Server.Lenient] turns these rules off.
//
// # Lifetime and concurrency
//
// [NewServer] and [Start] return a running server that must be closed with
// [Server.Close]; [NewTB] closes it when the test ends. A Server answers
// concurrent requests; all its methods are safe for concurrent use. Close
// ends delays and streams in progress and waits for every handler to
// return. The main API does not depend on package testing, so programs
// (such as an offline demo) can use it too; only [NewTB] takes a
// testing.TB.
//
// The server works in real time: [Reply.Delay] and [Reply.EventDelay] are
// real waits, so keep them short. To test a client's retry delays in fake
// time with testing/synctest, create the server outside the bubble and run
// the client inside it (preferably with keep-alives disabled); a server
// created inside a bubble blocks on the network and stops fake time.
package agentlooptest
