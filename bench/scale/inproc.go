package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/bench/scale/internal/result"
	"github.com/agentloop/agentloop/bench/scale/internal/script"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/settings"
)

// newTransport returns the HTTP transport every in-process session
// shares. Over HTTP/1.1 it keeps up to sessions connections to the
// scripted API (idle or not) so that a session's next turn reuses one;
// with h2c it speaks only HTTP/2 without TLS (prior knowledge); with tls
// it trusts the run's certificate and speaks HTTP/2 when ALPN agrees, as
// against the real API. Over h2c net/http pools connections as for
// HTTP/1.1 (unlike over TLS, where its HTTP/2 pool dials one at a time per
// host): a request that finds no connection idle dials one, so the N
// sessions starting at once would open thousands; MaxConnsPerHost (100)
// keeps it to a TLS client's few, and later turns multiplex on them.
func newTransport(cfg *config) (*http.Transport, error) {
	base, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return nil, fmt.Errorf("http.DefaultTransport is a %T", http.DefaultTransport)
	}
	tr := base.Clone() // ForceAttemptHTTP2 stays on: HTTP/2 over TLS
	tr.MaxIdleConns = 0
	tr.MaxIdleConnsPerHost = cfg.sessions
	// A session has one request in flight at a time, so sessions
	// connections are enough. Without the cap net/http dials a new one
	// whenever a session's next request comes before its last connection
	// is back in the idle pool (the transport puts it back in its own
	// goroutine, after the body's end reaches the reader), and kept ~1,500
	// for 1,000 sessions: each with two goroutines and 8 KiB of buffers.
	tr.MaxConnsPerHost = cfg.sessions
	trustRunCert(cfg, tr)
	if cfg.h2c {
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetUnencryptedHTTP2(true)
		// At most 100 connections, as a TLS client's HTTP/2 pool would
		// hold a few rather than dial one per request at the start (each
		// connect costs CPU the sessions would not spend against the real
		// API). SCALE_H2C_MAXCONNS overrides it; 0 is no limit.
		tr.MaxConnsPerHost = 100
		if n := os.Getenv("SCALE_H2C_MAXCONNS"); n != "" {
			v, err := strconv.Atoi(n)
			if err != nil || v < 0 {
				return nil, fmt.Errorf("SCALE_H2C_MAXCONNS=%q: want a count", n)
			}
			tr.MaxConnsPerHost = v
		}
	}
	return tr, nil
}

// trustRunCert makes tr trust the certificate made for a -tls run.
func trustRunCert(cfg *config, tr *http.Transport) {
	if cfg.tls {
		tr.TLSClientConfig = &tls.Config{RootCAs: cfg.tlsRoots}
	}
}

// newProvider returns the Anthropic provider every in-process session
// shares, on newTransport's transport with the timing transport around it.
// Its buffers are the provider's own ([anthropic.TuneTransport]), as the
// provider's default client sets them.
func newProvider(cfg *config) (model.Provider, error) {
	tr, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.client == clientShipped {
		// The provider's own transport, as it makes it when given no
		// client; only the run's certificate is added, which the
		// system's roots would otherwise hold.
		tr = anthropic.NewTransport()
		if tr == nil {
			return nil, errors.New("http.DefaultTransport is not an *http.Transport")
		}
		trustRunCert(cfg, tr)
	} else {
		anthropic.TuneTransport(tr)
	}
	p, err := anthropic.New(&anthropic.Options{
		APIKey: "sk-bench", BaseURL: cfg.serverURL,
		HTTPClient: &http.Client{Transport: &timingTransport{base: tr}},
	})
	if err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	return p, nil
}

// sessionOptions are the options of every in-process session: the default
// tools on the fixture tree, permissions bypassed, no settings files.
func sessionOptions(cfg *config, prov model.Provider) *agentloop.Options {
	return &agentloop.Options{
		Cwd:                  cfg.fixture,
		Provider:             prov,
		PermissionMode:       agentloop.PermissionBypass,
		SettingSources:       []settings.SettingSource{},
		NoSessionPersistence: !cfg.persist,
		ConfigDir:            cfg.configDir,
	}
}

// sessionResult is what one in-process session reports.
type sessionResult struct {
	tl  *timeline
	err error
}

// runInproc runs cfg.sessions concurrent Query sessions in this process,
// all started at once, and measures them.
func runInproc(ctx context.Context, cfg *config, rec *result.Record) error {
	prov, err := newProvider(cfg)
	if err != nil {
		return err
	}
	opts := sessionOptions(cfg, prov)
	return runSessions(ctx, cfg, rec, func(ctx context.Context, tl *timeline) error {
		o := *opts
		return runSession(ctx, tl, cfg.prompt, &o)
	})
}

// runSessions runs cfg.sessions concurrent sessions in this process, each
// a call of session, all started at once, and measures them.
func runSessions(ctx context.Context, cfg *config, rec *result.Record, session func(context.Context, *timeline) error) error {
	runtime.GC()
	baseRSS, err := processRSS("self")
	if err != nil {
		return err
	}
	cpu0, _, err := cpuTime(syscall.RUSAGE_SELF)
	if err != nil {
		return err
	}
	child0, _, err := cpuTime(syscall.RUSAGE_CHILDREN)
	if err != nil {
		return err
	}
	use0, err := readUsage()
	if err != nil {
		return err
	}
	smp := startSampler(20*time.Millisecond, false)

	results := make([]sessionResult, cfg.sessions)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			tl := &timeline{}
			<-start
			results[i] = sessionResult{tl: tl, err: session(withTimeline(ctx, tl), tl)}
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	wall := time.Since(began)

	peakSampled, goroutines := smp.finish()
	cpu1, maxRSS, err := cpuTime(syscall.RUSAGE_SELF)
	if err != nil {
		return err
	}
	child1, _, err := cpuTime(syscall.RUSAGE_CHILDREN)
	if err != nil {
		return err
	}
	use1, err := readUsage()
	if err != nil {
		return err
	}

	var setups, between []float64
	for _, r := range results {
		rec.Turns += r.tl.turns()
		if r.err != nil {
			rec.Errors++
			if rec.FirstErr == "" {
				rec.FirstErr = r.err.Error()
			}
			continue
		}
		if s, b, ok := r.tl.overheads(); ok {
			setups = append(setups, ms(s))
			for _, d := range b {
				between = append(between, ms(d))
			}
		}
	}
	peak := max(maxRSS, peakSampled)
	self := cpu1 - cpu0
	rec.WallS = wall.Seconds()
	rec.CPUS = (self + child1 - child0).Seconds()
	if rec.Turns > 0 {
		rec.TurnsPerS = float64(rec.Turns) / rec.WallS
		rec.CPUPerTurnMs = rec.CPUS * 1000 / float64(rec.Turns)
		rec.SelfCPUPerTurnMs = self.Seconds() * 1000 / float64(rec.Turns)
	}
	if rec.Turns > 0 {
		rec.HTTP2Share = float64(http2Replies.Load()) / float64(rec.Turns)
	}
	use1.perTurn(use0, rec.Turns, rec)
	rec.BaseRSSMiB = toMiB(baseRSS)
	rec.PeakRSSMiB = toMiB(peak)
	rec.RSSPerInflightKiB = float64(peak-baseRSS) / 1024 / float64(cfg.sessions)
	rec.GoroutinesPeak = goroutines
	if maxRSS <= peakSampled { // the sampler saw the peak: say what it held
		m, live := smp.peakMemory()
		rec.PeakHeapObjectsMiB = toMiB(int64(m.HeapObjects))
		rec.PeakHeapUnusedMiB = toMiB(int64(m.HeapUnused))
		rec.PeakHeapFreeMiB = toMiB(int64(m.HeapFree))
		rec.PeakStacksMiB = toMiB(int64(m.Stacks))
		rec.PeakHeapGoalMiB = toMiB(int64(m.HeapGoal))
		rec.LiveHeapMaxMiB = toMiB(int64(live))
	}
	rec.SetupP50Ms, _ = result.Percentile(setups, 50)
	rec.SetupP99Ms, _ = result.Percentile(setups, 99)
	rec.OverheadP50Ms, _ = result.Percentile(between, 50)
	rec.OverheadP99Ms, _ = result.Percentile(between, 99)
	return nil
}

// runSession drains one Query stream, noting on tl when tool calls reach
// the consumer and when their results do. It returns an error unless every
// tool call succeeds and the stream ends in a success result.
func runSession(ctx context.Context, tl *timeline, prompt string, opts *agentloop.Options) error {
	tl.start = time.Now()
	var toolStart time.Time
	var res *agentloop.ResultMessage
	for m, err := range agentloop.Query(ctx, prompt, opts) {
		if err != nil {
			return fmt.Errorf("session: %w", err)
		}
		switch m := m.(type) {
		case *agentloop.AssistantMessage:
			if hasBlock(m.Message.Content, model.TypeToolUse) {
				toolStart = time.Now()
			}
		case *agentloop.UserMessage:
			if hasBlock(m.Message.Content, model.TypeToolResult) {
				tl.tool(toolStart, time.Now())
				if err := toolError(m.Message.Content); err != nil {
					return err
				}
			}
		case *agentloop.ResultMessage:
			tl.result = time.Now()
			res = m
		}
	}
	switch {
	case res == nil:
		return fmt.Errorf("session: stream ended without a result")
	case res.IsError || res.Subtype != "success":
		return fmt.Errorf("session: result %s: %v", res.Subtype, res.Errors)
	case res.Result == nil || *res.Result != script.Answer:
		return fmt.Errorf("session: result %v, want the script's answer", res.Result)
	}
	return nil
}

func hasBlock(content []model.Content, typ string) bool {
	for _, c := range content {
		if c.Type == typ {
			return true
		}
	}
	return false
}

// toolError returns an error for a failed tool result among content: the
// script's tool calls are all meant to work.
func toolError(content []model.Content) error {
	for _, c := range content {
		if c.Type == model.TypeToolResult && c.IsError != nil && *c.IsError {
			text := c.Text
			if len(text) > 200 {
				text = text[:200]
			}
			return fmt.Errorf("session: tool call %s failed: %s", c.ToolUseID, text)
		}
	}
	return nil
}
