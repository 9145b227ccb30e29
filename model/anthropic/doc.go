// Package anthropic is the [model.Provider] for the Anthropic Messages API.
//
// It sends each [model.Request] as one streaming call to
// POST {base}/v1/messages?beta=true, reads the server-sent events of the
// reply, reports them to a [model.Handler] as they arrive and returns the
// assembled [model.Response]. Transient failures are retried inside
// [Provider.Stream] with the same counts and delays as the reference CLI.
// The transport is net/http with a small client of this package's own (base
// URL, headers, middleware, errors of HTTP status; the official Go SDK's
// client, which it replaced, linked the SDK's whole API, OpenTelemetry and
// more into every program); the request body is the JSON of the
// model.Request exactly as it marshals, so no field is lost on the way.
//
// # Configuring
//
// The zero [Options] is a working configuration: it reads the credentials and
// the base URL from the environment.
//
//	p, err := anthropic.New(nil)
//	if err != nil {
//		return err // anthropic.ErrNoCredentials: nothing to authenticate with
//	}
//	resp, err := p.Stream(ctx, &model.Request{
//		Model:     "claude-opus-5-5",
//		MaxTokens: 1024,
//		Messages: []model.Message{{
//			Role:    "user",
//			Content: []model.Content{model.TextBlock("Say hello")},
//		}},
//	}, model.NopHandler{})
//
// Set fields of Options to override the environment: APIKey, AuthToken,
// BaseURL (a gateway or a local fake such as agentlooptest), HTTPClient,
// extra Headers, MaxRetries and the timeouts. A Provider is safe for
// concurrent use; subagents share their parent's.
//
// # Timeouts
//
// No attempt can hang. Three limits cut one short, each set by an Options
// field, else by the reference CLI's environment variable (whole
// milliseconds), else by its default:
//
//   - StreamIdleTimeout, CLAUDE_STREAM_IDLE_TIMEOUT_MS, 300 s: the longest
//     silence between two events of the stream; every event restarts it,
//     pings included. The reference never goes below 300 s; this package
//     honours smaller values (tests, latency-sensitive hosts).
//   - FirstByteTimeout, CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS, 300 s: from
//     sending the request to the stream's first event, so connecting, a
//     server that never sends headers and one that sends headers and then
//     nothing are all bounded.
//   - RequestTimeout, API_TIMEOUT_MS, none: one attempt as a whole, headers
//     to message_stop. Each retry gets its own; the call as a whole is
//     bounded by ctx.
//
// A negative field turns its limit off; a malformed variable makes [New]
// fail with an error naming it. An attempt cut short is a connection error
// whose RetryInfo.Err (and, when retries run out, the returned error) is a
// [*TimeoutError] that says which limit ran out, e.g. "stream stalled: no
// event for 5m0s after 3 events (CLAUDE_STREAM_IDLE_TIMEOUT_MS)".
//
// # Credentials
//
// An API key is sent in the x-api-key header; an auth token (for gateways
// and OAuth-style setups) as Authorization: Bearer. Options.APIKey and
// Options.AuthToken win; when neither is set, ANTHROPIC_API_KEY and
// ANTHROPIC_AUTH_TOKEN are read, and when both of those are set both headers
// are sent. With no credential at all, [New] returns [ErrNoCredentials].
// ANTHROPIC_BASE_URL, when set, replaces https://api.anthropic.com.
//
// Options.APIKeyHelper (the apiKeyHelper setting) or Options.APIKeyFunc
// is the credential of last resort: a command or function whose output is
// the key, kept for five minutes (CLAUDE_CODE_API_KEY_HELPER_TTL_MS) and
// fetched again after a 401. A helper that fails fails the call at once
// with an [*APIKeyHelperError].
//
// # Amazon Bedrock and Google Vertex AI
//
// Options.Platform, or CLAUDE_CODE_USE_BEDROCK=1 / CLAUDE_CODE_USE_VERTEX=1,
// sends the requests to a cloud platform through a middleware of this
// package's own for each (the SDK's bedrock and vertex packages would link
// the SDK's client, the AWS SDK's configuration stack, gRPC and the Google
// API client). Both rewrite the URL and body (the model moves into the
// path, anthropic_version into the body) and authenticate: Bedrock with
// AWS_BEARER_TOKEN_BEDROCK, else a SigV4 signature (the signer of the AWS
// SDK's core module) with Options.AWSCredentials or a small default chain
// (the environment's keys, the profile's keys or credential_process in
// the shared files, the AWS CLI's `aws configure export-credentials` for
// SSO and role profiles, web identity, the container endpoint and the EC2
// instance metadata service; [ErrNoAWSCredentials] when none is found);
// Vertex with a Google OAuth token from golang.org/x/oauth2.
// Bedrock's event-stream answer is turned into server-sent events before
// this package reads it, so retries, timeouts and the stream reader are
// the same on every platform. The regions, project, base URLs and the
// switches that skip authentication are read from the reference CLI's
// variables; see [Options] and docs/providers.md.
//
// Every request identifies itself as agentloop/[Version] in User-Agent,
// sends anthropic-version: 2023-06-01 and, when the request lists betas,
// anthropic-beta with them comma-joined.
//
// # Retries
//
// Stream retries by itself:
//
//   - 500 and other 5xx, 429, connection errors and timeouts are retried
//     up to MaxRetries times (CLAUDE_CODE_MAX_RETRIES, capped at 15, else
//     10, so 11 requests);
//   - 529 (overloaded) gives up on the third 529, even with retries left
//     (an overloaded_error event in the stream counts as a 529);
//   - failures that cannot succeed on retry end sooner: a 401 is retried
//     once (the reference retries it ten times, three minutes of silence
//     for a bad key), and so is a "no such host" DNS answer;
//   - 400 and every other 4xx fail at once.
//
// Before retry n the provider waits min(500ms × 2^(n−1), 32s) plus up to a
// quarter more of random jitter, or what the response asks for, when it
// does: retry-after-ms, else retry-after in seconds or as an HTTP date (a
// wait of over a day is ignored); and it calls [model.Handler.Retry] with
// the attempt, the delay and the failure's kind before waiting.
//
// A stream that breaks after it started is retried too. An error event in the
// stream is retried after the same backoff but without a Retry call (the
// reference prints no api_retry line for it). A stream that cannot be made
// sense of (bad JSON, a delta for a block that never started, an end without
// message_stop, a dropped connection) is retried as a connection error and,
// when retries run out, reported as an error that wraps
// [model.ErrMalformedStream]. The usage of attempts that failed after
// message_start is added up in [model.Response.FailedUsage].
//
// The handler hears of an attempt's events and completed blocks as they
// arrive, so it may hear of part of a reply whose stream then fails; after
// the retry a new message_start begins the reply again. Pings and error
// events are not passed to [model.Handler.Event].
//
// When the provider gives up it returns a [*model.APIError] with the HTTP
// status, the API's error type and message, the number of retries made and
// the request-id header. [model.Response.Duration] runs from the first
// attempt's request to the end of the successful one, so failed attempts
// and the waits between them count. Cancelling ctx stops a wait or a stream at once;
// Stream then returns an error that wraps ctx.Err().
package anthropic
