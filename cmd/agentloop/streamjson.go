package main

// The stream-json driver: with --input-format stream-json (and
// --output-format stream-json) agentloop is the engine of an official
// Agent SDK. The host writes JSON lines on stdin (initialize, user
// messages, control requests, answers to the engine's own requests) and
// reads JSON lines on stdout (the session's messages, answers, and the
// engine's requests: can_use_tool, hook_callback, mcp_message). See
// docs/design.md, "Stream-json driver", and wire-protocol.md.
//
// Note for the bridges (bridge_*.go): the driver calls
// canUseToolBridge(host), hookBridge(host, init.Hooks) with
// map[string][]wire.HookMatcher, and sdkMCPBridge(host, init.SDKMCPServers,
// init.SDKMCPServerManifests) with map[string]wire.MCPManifest, as the
// brief has them.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/internal/wire"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/google/uuid"
)

// sdkMinimalPrompt is the system prompt of a session whose host sent an
// empty systemPrompt ([""], what the SDKs send when their caller gave
// none): a short prompt instead of agentloop's full one, as the
// reference does.
const sdkMinimalPrompt = "You are an AI agent driven by an application through an Agent SDK. Use the tools you are given to do what the user asks."

// drainPoll is how often the driver checks, after stdin ended, whether
// the queued turns are done.
const drainPoll = 10 * time.Millisecond

// lineOut writes whole lines to stdout: one writer for messages, control
// answers and the engine's requests, so that lines never interleave.
type lineOut struct {
	mu  sync.Mutex
	w   *bufio.Writer
	err error // the first write error; later writes are dropped
	// muted: nothing more is written (SIGTERM, see signalHooks).
	muted bool
}

// mute drops every later line.
func (o *lineOut) mute() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.muted = true
}

// line writes b (one line, with its newline) and flushes it.
func (o *lineOut) line(b []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lineLocked(b)
}

// lineLocked is line for a caller that holds o.mu.
func (o *lineOut) lineLocked(b []byte) error {
	if o.muted {
		return nil
	}
	if o.err != nil {
		return o.err
	}
	if _, err := o.w.Write(b); err != nil {
		o.err = fmt.Errorf("writing output: %w", err)
		return o.err
	}
	if err := o.w.Flush(); err != nil {
		o.err = fmt.Errorf("writing output: %w", err)
	}
	return o.err
}

// wire writes a control line.
func (o *lineOut) wire(m wire.Message) error {
	b, err := wire.Encode(m)
	if err != nil {
		return err
	}
	return o.line(b)
}

// value writes v as a JSON line, HTML characters unescaped.
func (o *lineOut) value(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encoding an output line: %w", err)
	}
	return o.line(buf.Bytes())
}

// hostLink implements hostCaller over the driver's stdout and stdin.
type hostLink struct {
	out       *lineOut
	mu        sync.Mutex
	pending   map[string]pendingCall // by request id
	cancelled map[string]bool        // ids given up on: a late answer is dropped quietly
	gone      bool
	goneCh    chan struct{} // closed when stdin ends

	// state, when set, writes a session_state_changed line: the session
	// requires_action while a can_use_tool request is pending, as the
	// reference says, and is running again once none is.
	state    func(string)
	awaiting int // can_use_tool requests pending

	// report, when set, receives the bridges' problems (bridgeReporter).
	report func(tag, text string)
}

// bridgeReport implements bridgeReporter: the bridges' problems go to
// the driver (a diagnostic line in the stream and the warning channel),
// or to stderr before the session exists.
func (h *hostLink) bridgeReport(tag, text string) {
	h.mu.Lock()
	f := h.report
	h.mu.Unlock()
	if f == nil {
		fmt.Fprintf(os.Stderr, "agentloop: %s: %s\n", tag, text)
		return
	}
	f(tag, text)
}

// asking counts a can_use_tool request in (+1) or out (-1) and writes the
// state change when there is one.
func (h *hostLink) asking(delta int) {
	h.mu.Lock()
	before := h.awaiting
	h.awaiting += delta
	after, state := h.awaiting, h.state
	h.mu.Unlock()
	switch {
	case state == nil:
	case before == 0 && after > 0:
		state("requires_action")
	case before > 0 && after == 0:
		state("running")
	}
}

type pendingCall struct {
	subtype string
	answer  chan *wire.ControlResponse // buffered, one answer
	ctx     context.Context            // the caller's
}

func newHostLink(out *lineOut) *hostLink {
	return &hostLink{out: out, pending: map[string]pendingCall{}, cancelled: map[string]bool{}, goneCh: make(chan struct{})}
}

// Call implements hostCaller.
func (h *hostLink) Call(ctx context.Context, subtype string, req any) (json.RawMessage, error) {
	fields, err := bodyFields(req)
	if err != nil {
		return nil, fmt.Errorf("encoding the %s request: %w", subtype, err)
	}
	id := uuid.NewString()
	ch := make(chan *wire.ControlResponse, 1)
	h.mu.Lock()
	if h.gone {
		h.mu.Unlock()
		return nil, errHostGone
	}
	h.pending[id] = pendingCall{subtype: subtype, answer: ch, ctx: ctx}
	h.mu.Unlock()
	if subtype == "can_use_tool" {
		h.asking(+1)
		defer h.asking(-1)
	}
	if err := h.out.wire(&wire.ControlRequest{RequestID: id, Request: &wire.OtherRequest{Name: subtype, Fields: fields}}); err != nil {
		h.forget(id)
		return nil, fmt.Errorf("sending %s to the host: %w", subtype, err)
	}
	select {
	case r := <-ch:
		return answerOf(subtype, r)
	case <-ctx.Done():
		// Under the output's lock, so that an interrupt that holds it
		// (streamDriver.interrupt) withdraws the call itself, before
		// its answer, and this finds it gone.
		h.out.mu.Lock()
		if h.forget(id) {
			if b, err := wire.Encode(&wire.ControlCancel{RequestID: id}); err == nil {
				_ = h.out.lineLocked(b)
			}
		}
		h.out.mu.Unlock()
		return nil, ctx.Err()
	case <-h.goneCh:
		// The reader routes every answer it read before stdin ended,
		// so an answer followed at once by EOF is already in ch.
		select {
		case r := <-ch:
			return answerOf(subtype, r)
		default:
		}
		h.forget(id)
		return nil, errHostGone
	}
}

// answerOf is the result of a call the host answered with r.
func answerOf(subtype string, r *wire.ControlResponse) (json.RawMessage, error) {
	if r.IsError {
		return nil, &hostError{Subtype: subtype, Message: r.Error, Code: r.ErrorCode}
	}
	if r.Response == nil {
		return json.RawMessage("{}"), nil
	}
	return r.Response, nil
}

// forget drops a pending call and reports whether it was still pending.
func (h *hostLink) forget(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.pending[id]
	delete(h.pending, id)
	if ok {
		h.cancelled[id] = true
	}
	return ok
}

// withdrawLocked gives up on the pending calls of subtype whose caller's
// context has ended (those of the turn an interrupt just cancelled; a
// background subagent's go on) and writes a control_cancel_request for
// each; the caller holds h.out.mu (see streamDriver.interrupt).
func (h *hostLink) withdrawLocked(subtype string) {
	h.mu.Lock()
	var ids []string
	for id, p := range h.pending {
		if p.subtype == subtype && p.ctx.Err() != nil {
			ids = append(ids, id)
			delete(h.pending, id)
			h.cancelled[id] = true
		}
	}
	h.mu.Unlock()
	slices.Sort(ids)
	for _, id := range ids {
		if b, err := wire.Encode(&wire.ControlCancel{RequestID: id}); err == nil {
			_ = h.out.lineLocked(b)
		}
	}
}

// answer routes the host's answer to its call. It reports false for an
// answer to an id never asked (or already answered); a late answer to a
// call given up on is dropped and reported true.
func (h *hostLink) answer(r *wire.ControlResponse) bool {
	h.mu.Lock()
	p, ok := h.pending[r.RequestID]
	delete(h.pending, r.RequestID)
	late := h.cancelled[r.RequestID]
	delete(h.cancelled, r.RequestID)
	h.mu.Unlock()
	if ok {
		p.answer <- r
	}
	return ok || late
}

// close ends every pending and later call with errHostGone.
func (h *hostLink) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.gone {
		h.gone = true
		close(h.goneCh)
	}
}

// bodyFields are the members of a request body: req must encode to a
// JSON object (or be nil); "subtype" is the call's, not req's.
func bodyFields(req any) (map[string]json.RawMessage, error) {
	if req == nil {
		return nil, nil
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("want a value that encodes to a JSON object: %w", err)
	}
	delete(m, "subtype")
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// stdinItem is one thing read from stdin.
type stdinItem struct {
	msg wire.Message
	err error // a bad line (*wire.LineError); the reading goes on
	eof bool  // stdin ended (or could not be read: err says why)
}

// readLines reads stdin into items until it ends or stop closes.
func readLines(r io.Reader, items chan<- stdinItem, stop <-chan struct{}) {
	wr := wire.NewReader(r, 0)
	for {
		m, err := wr.Next()
		it := stdinItem{msg: m, err: err}
		var le *wire.LineError
		if err != nil && !errors.As(err, &le) {
			it = stdinItem{eof: true}
			if !errors.Is(err, io.EOF) {
				it.err = err
			}
		}
		select {
		case items <- it:
		case <-stop:
			return
		}
		if it.eof {
			return
		}
	}
}

// streamDriver runs one stream-json session.
type streamDriver struct {
	c         *config
	out       *lineOut
	stderr    io.Writer
	logger    *slog.Logger
	warn      func(string)
	host      *hostLink
	client    *agentloop.Client
	initModel string // the model at start, for set_model's reset
	mcpMu     sync.Mutex
	sdkMCP    map[string]agentloop.MCPServerConfig // the host's in-process servers, for host→CLI mcp_message; under mcpMu
	warned    map[string]bool                      // user-line fields already warned about
	noInit    bool                                 // the session started without initialize
	lastErr   atomic.Bool                          // the last result was an error
	lost      lostWrites
	replay    replays  // echoes of queued user messages (replay.go)
	hostIDs   sync.Map // uuids the host gave its user messages (string → struct{})
	emitState bool     // write session_state_changed lines (wantStateLines)

	bg           sync.WaitGroup // answers being prepared apart (MCP reconnects, …)
	stopMessages func()         // ends the stream of messages and waits (startConsumer)
}

// runStreamJSON is run for --input-format stream-json. It returns the
// exit code: 0 when stdin ended and the last result (if any) was a
// success, 1 after an error result or a failure to start.
func runStreamJSON(ctx context.Context, c *config, stdin io.Reader, stdout, stderr io.Writer, logger *slog.Logger, warn func(string)) int {
	bw := bufio.NewWriter(stdout)
	defer bw.Flush()
	out := &lineOut{w: bw}
	d := &streamDriver{c: c, out: out, stderr: stderr, logger: logger, warn: warn, host: newHostLink(out), warned: map[string]bool{},
		emitState: wantStateLines(os.Getenv)}
	defer d.host.close()
	items := make(chan stdinItem, 64)
	stop := make(chan struct{})
	defer close(stop)
	go readLines(stdin, items, stop)

	// Until initialize: user lines and the rest wait in buffered.
	var (
		buffered []stdinItem
		init     *wire.ControlRequest
	)
wait:
	for {
		select {
		case <-ctx.Done():
			return exitFailure
		case it := <-items:
			switch {
			case it.eof:
				buffered = append(buffered, it)
				break wait
			case it.err != nil:
				d.badLine(it.err)
			default:
				if r, ok := it.msg.(*wire.ControlRequest); ok {
					if _, ok := r.Request.(*wire.InitializeRequest); ok {
						init = r
						break wait
					}
				}
				buffered = append(buffered, it)
				if !c.sdk.awaitInit {
					break wait // a host that does not initialize
				}
			}
		}
	}
	d.noInit = init == nil
	opts, err := d.build(ctx, init, items, &buffered)
	if err != nil {
		return c.startupFailure(err, bw, stderr)
	}
	defer d.client.Close()
	d.host.mu.Lock()
	d.host.state = d.state
	d.host.report = func(tag, text string) {
		d.warn(tag + ": " + text)
		_ = d.out.value(agentloop.DiagnosticMessage(d.client.SessionID(), agentloop.Diagnostic{Tag: tag, Text: text}))
	}
	d.host.mu.Unlock()
	d.initModel = d.client.Model()
	if init != nil {
		d.answerInitialize(init, opts)
	}

	d.startConsumer(ctx)
	defer d.stopConsumer()
	sigint := make(chan struct{})
	var sigOnce sync.Once
	onSignals(ctx, func() bool {
		sigOnce.Do(func() {
			// The running turn ends as an interrupt does, the queued
			// ones do not run, and no more input is read.
			d.replay.withdraw(func() []string { // never ran: never echoed
				res, _ := d.client.Interrupt(canceledContext(), &agentloop.InterruptOptions{CancelQueued: true})
				return res.Cancelled
			})
			close(sigint)
		})
		return true
	}, out.mute)

	eof := false
	for _, it := range buffered {
		eof = d.handle(ctx, it) || eof
	}
	for !eof {
		select {
		case <-ctx.Done():
			eof = true
		case <-sigint:
			eof = true
		case it := <-items:
			eof = d.handle(ctx, it)
		}
	}
	d.host.close()
	// Finish the queued turns, then end the stream.
	tick := time.NewTicker(drainPoll)
	for ctx.Err() == nil && !d.client.Idle() {
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
	}
	tick.Stop()
	d.stopConsumer()
	d.bg.Wait()
	if err := d.client.Close(); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "agentloop: %s\n", strings.TrimPrefix(err.Error(), "agentloop: "))
	}
	if out.err != nil {
		fmt.Fprintf(stderr, "agentloop: %v\n", out.err)
		return exitFailure
	}
	if ctx.Err() != nil || d.lost.report(c.outputFormat, stderr) || d.lastErr.Load() {
		return exitFailure
	}
	return exitOK
}

// startConsumer starts consuming the session's messages under ctx.
func (d *streamDriver) startConsumer(ctx context.Context) {
	mctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.consume(mctx)
	}()
	d.stopMessages = func() {
		stop()
		<-done
	}
}

// stopConsumer ends the stream of messages (a running turn is cancelled)
// and waits for it; a no-op when none runs.
func (d *streamDriver) stopConsumer() {
	if d.stopMessages != nil {
		d.stopMessages()
		d.stopMessages = nil
	}
}

// betweenTurns runs f with the stream of messages paused, for the
// client's methods that cannot run while it is consumed
// (Client.ContextUsage). Only the dispatcher sends messages, so while it
// runs f no turn can start; when a turn is running f is not run and an
// error says so.
func (d *streamDriver) betweenTurns(ctx context.Context, f func() error) error {
	if !d.client.Idle() {
		return errors.New("a turn is running; ask again when it has ended")
	}
	d.stopConsumer()
	defer d.startConsumer(ctx)
	return f()
}

// build builds the session (d.client) from the flags and init. Building
// may already need the host (an in-process MCP server of the host is
// connected over mcp_message), so meanwhile the host's answers are routed
// and every other line waits in buffered; if stdin ends, the host's
// pending calls fail.
func (d *streamDriver) build(ctx context.Context, init *wire.ControlRequest, items <-chan stdinItem, buffered *[]stdinItem) (*agentloop.Options, error) {
	type result struct {
		opts   *agentloop.Options
		client *agentloop.Client
		err    error
	}
	done := make(chan result, 1)
	go func() {
		o, err := d.options(init)
		var cl *agentloop.Client
		if err == nil {
			cl, err = agentloop.NewClient(o)
		}
		done <- result{o, cl, err}
	}()
	eof := slices.ContainsFunc(*buffered, func(it stdinItem) bool { return it.eof })
	if eof {
		d.host.close()
	}
	for {
		var in <-chan stdinItem
		if !eof {
			in = items
		}
		select {
		case r := <-done:
			d.client = r.client
			return r.opts, r.err
		case <-ctx.Done():
			d.host.close() // its calls to the host end
			r := <-done
			if r.client != nil {
				r.client.Close()
			}
			return nil, ctx.Err()
		case it := <-in:
			if _, ok := it.msg.(*wire.ControlResponse); ok {
				d.handle(ctx, it)
				continue
			}
			*buffered = append(*buffered, it)
			if it.eof {
				eof = true
				d.host.close()
			}
		}
	}
}

// consume writes the session's messages until ctx ends, each turn framed
// by session_state_changed running and idle.
func (d *streamDriver) consume(ctx context.Context) {
	running := false
	for m, err := range d.client.Messages(ctx) {
		if err != nil {
			if ctx.Err() == nil {
				fmt.Fprintf(d.stderr, "agentloop: %s\n", strings.TrimPrefix(err.Error(), "agentloop: "))
			}
			continue
		}
		if !running {
			running = true
			d.state("running")
		}
		// A turn's prompt is echoed after its system/init, as the
		// reference does; before any other message.
		init := isInit(m)
		if !init {
			d.flushReplays()
		}
		d.lost.see(m)
		d.c.trace.see(m) // debugtrace.go
		if err := d.out.value(m); err != nil {
			continue // reported at the end
		}
		if init {
			d.flushReplays()
		}
		for _, w := range d.c.afterInit(m) { // streamwarn.go
			_ = d.out.value(w)
		}
		if r, ok := m.(*agentloop.ResultMessage); ok {
			d.lastErr.Store(r.IsError)
			running = false
			d.state("idle")
		}
	}
	d.flushReplays()
	if running {
		d.state("idle")
	}
}

// isInit reports whether m is a system/init message.
func isInit(m agentloop.Message) bool {
	sm, ok := m.(*agentloop.SystemMessage)
	return ok && sm.Subtype == message.SubtypeInit
}

// The environment variables that ask for session_state_changed lines.
// The SDKs set the first for every engine they spawn; the reference
// writes no state line without one of them, and neither does agentloop.
const (
	envReadsSessionState = "CLAUDE_CODE_SDK_READS_SESSION_STATE"
	envEmitSessionState  = "CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS"
)

// wantStateLines reports whether the host asked for session_state_changed
// lines: either variable set to a true value ("1", "true", any case).
func wantStateLines(getenv func(string) string) bool {
	for _, k := range []string{envReadsSessionState, envEmitSessionState} {
		switch strings.ToLower(strings.TrimSpace(getenv(k))) {
		case "1", "true", "yes", "on":
			return true
		}
	}
	return false
}

// state writes a host-only session_state_changed line, when the host
// asked for them (wantStateLines).
func (d *streamDriver) state(s string) {
	if !d.emitState {
		return
	}
	_ = d.out.value(map[string]any{"type": "system", "subtype": "session_state_changed", "state": s,
		"sdk_host_only": true, "uuid": uuid.NewString(), "session_id": d.client.SessionID()})
}

// badLine reports a line that could not be read: on stderr, and as an
// error answer when it was a control request with an id.
func (d *streamDriver) badLine(err error) {
	fmt.Fprintf(d.stderr, "agentloop: stdin: %s\n", strings.TrimPrefix(err.Error(), "wire: "))
	var de *wire.DecodeError
	if errors.As(err, &de) && de.Type == wire.TypeControlRequest && de.RequestID != "" {
		_ = d.out.wire(wire.Failure(de.RequestID, "malformed control request: "+strings.TrimPrefix(de.Error(), "wire: "), ""))
	}
}

// handle acts on one stdin item and reports whether stdin ended.
func (d *streamDriver) handle(ctx context.Context, it stdinItem) bool {
	switch {
	case it.eof:
		if it.err != nil {
			fmt.Fprintf(d.stderr, "agentloop: reading stdin: %v\n", it.err)
		}
		return true
	case it.err != nil:
		d.badLine(it.err)
		return false
	}
	switch m := it.msg.(type) {
	case *wire.User:
		d.send(m)
	case *wire.ControlRequest:
		d.control(ctx, m)
	case *wire.ControlResponse:
		if !d.host.answer(m) {
			fmt.Fprintf(d.stderr, "agentloop: stdin: an answer to request %q, which is not pending, was ignored\n", m.RequestID)
		}
	case *wire.ControlCancel:
		// The host withdraws one of its own requests; the driver answers
		// each as it reads it, so there is nothing left to cancel.
	case *wire.KeepAlive:
	}
	return false
}

// send queues a user line.
func (d *streamDriver) send(u *wire.User) {
	for _, f := range slices.Sorted(maps.Keys(u.Extra)) {
		d.warnOnce("user message field "+f, fmt.Sprintf("the user message field %q is ignored", f))
	}
	if u.IsSynthetic {
		d.warnOnce("isSynthetic", "the user message field \"isSynthetic\" is ignored: the message is sent as the user's")
	}
	if u.ClientComposed {
		d.warnOnce("client_composed", "the user message field \"client_composed\" is ignored")
	}
	if u.ParentToolUseID != nil {
		d.warnOnce("parent_tool_use_id", "the user message field \"parent_tool_use_id\" is ignored: messages are sent to the main conversation")
	}
	in := agentloop.UserInput{UUID: u.UUID, Priority: string(u.Priority), ShouldQuery: u.ShouldQuery}
	if u.UUID != "" {
		d.hostIDs.Store(u.UUID, struct{}{})
	}
	blocks := u.Message.Content
	if len(blocks) == 1 && blocks[0].Type == model.TypeText {
		in.Text = blocks[0].Text
	} else {
		in.Content = blocks
	}
	send := func() (string, error) { return d.client.Send(in) }
	var err error
	// As the reference does, a local command's prompt is not echoed: its
	// output line (local_command_source) stands for it.
	if d.c.sdk.replayUser && !(in.Text != "" && conversation.IsLocalCommand(in.Text)) {
		var line map[string]json.RawMessage
		b, merr := u.MarshalJSON()
		if merr == nil {
			merr = json.Unmarshal(b, &line)
		}
		if merr != nil {
			fmt.Fprintf(d.stderr, "agentloop: replaying a user message: %v\n", merr)
			_, err = send()
		} else {
			_, err = d.replay.sendAndAdd(send, func(id string) any {
				line["uuid"], _ = json.Marshal(id)
				line["session_id"], _ = json.Marshal(d.client.SessionID())
				line["isReplay"] = json.RawMessage("true")
				return line
			})
		}
	} else {
		_, err = send()
	}
	if err != nil {
		fmt.Fprintf(d.stderr, "agentloop: a user message was refused: %s\n", strings.TrimPrefix(err.Error(), "agentloop: "))
	}
}

// warnOnce warns about key the first time only.
func (d *streamDriver) warnOnce(key, text string) {
	if !d.warned[key] {
		d.warned[key] = true
		d.warn(text)
	}
}

// canceledContext is a context already done: Client.Interrupt given it
// cancels the turn and returns without waiting for the turn to end.
func canceledContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
