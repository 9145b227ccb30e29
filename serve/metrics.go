package serve

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
)

// metrics are the server's Prometheus metrics, written by hand in the
// text exposition format (version 0.0.4).
type metrics struct {
	sessionsCreated atomic.Int64
	turns           atomic.Int64
	turnErrors      atomic.Int64
	toolErrors      atomic.Int64
	inputTokens     atomic.Int64
	outputTokens    atomic.Int64
	permissionAsks  atomic.Int64
	leaseConflicts  atomic.Int64

	mu       sync.Mutex
	costUSD  float64
	requests map[string]int64 // by status code
	turnDur  histogram
	httpDur  histogram
}

// latencyBuckets are the upper bounds, in seconds, of the histograms.
var latencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

type histogram struct {
	counts []int64 // per bucket, not cumulative; one more for +Inf
	sum    float64
	n      int64
}

func (h *histogram) observe(v float64) {
	if h.counts == nil {
		h.counts = make([]int64, len(latencyBuckets)+1)
	}
	i := sort.SearchFloat64s(latencyBuckets, v)
	h.counts[i]++
	h.sum += v
	h.n++
}

func (h *histogram) write(w io.Writer, name string) {
	var cum int64
	for i, b := range latencyBuckets {
		if h.counts != nil {
			cum += h.counts[i]
		}
		fmt.Fprintf(w, "%s_bucket{le=\"%s\"} %d\n", name, strconv.FormatFloat(b, 'g', -1, 64), cum)
	}
	fmt.Fprintf(w, "%s_bucket{le=\"+Inf\"} %d\n%s_sum %s\n%s_count %d\n", name, h.n, name, fmtFloat(h.sum), name, h.n)
}

func fmtFloat(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func (m *metrics) addCost(usd float64) {
	m.mu.Lock()
	m.costUSD += usd
	m.mu.Unlock()
}

func (m *metrics) observeTurn(seconds float64) {
	m.mu.Lock()
	m.turnDur.observe(seconds)
	m.mu.Unlock()
}

func (m *metrics) observeRequest(code int, seconds float64) {
	m.mu.Lock()
	if m.requests == nil {
		m.requests = map[string]int64{}
	}
	m.requests[strconv.Itoa(code)]++
	m.httpDur.observe(seconds)
	m.mu.Unlock()
}

// write writes the exposition; active and running are gauges the caller
// counts.
func (m *metrics) write(w io.Writer, active, running, subscribers int, draining bool) {
	counter := func(name, help string, v int64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", name, help, name, name, v)
	}
	gauge := func(name, help string, v int) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n%s %d\n", name, help, name, name, v)
	}
	gauge("agentloop_serve_sessions_active", "Sessions with a client open on this replica.", active)
	gauge("agentloop_serve_sessions_running", "Sessions running a turn on this replica.", running)
	gauge("agentloop_serve_event_subscribers", "Open event streams.", subscribers)
	d := 0
	if draining {
		d = 1
	}
	gauge("agentloop_serve_draining", "1 while the replica drains.", d)
	counter("agentloop_serve_sessions_created_total", "Sessions created (forks included).", m.sessionsCreated.Load())
	counter("agentloop_serve_turns_total", "Turns that ended with a result.", m.turns.Load())
	counter("agentloop_serve_turn_errors_total", "Turns that ended with an error result.", m.turnErrors.Load())
	counter("agentloop_serve_tool_errors_total", "Tool results that were errors.", m.toolErrors.Load())
	counter("agentloop_serve_permission_requests_total", "Permission requests published.", m.permissionAsks.Load())
	counter("agentloop_serve_lease_conflicts_total", "Requests refused because another replica holds the session.", m.leaseConflicts.Load())
	fmt.Fprintf(w, "# HELP agentloop_serve_tokens_total Tokens of finished turns.\n# TYPE agentloop_serve_tokens_total counter\n")
	fmt.Fprintf(w, "agentloop_serve_tokens_total{type=\"input\"} %d\nagentloop_serve_tokens_total{type=\"output\"} %d\n",
		m.inputTokens.Load(), m.outputTokens.Load())
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Fprintf(w, "# HELP agentloop_serve_cost_usd_total Cost of finished turns in USD.\n# TYPE agentloop_serve_cost_usd_total counter\nagentloop_serve_cost_usd_total %s\n", fmtFloat(m.costUSD))
	fmt.Fprintf(w, "# HELP agentloop_serve_http_requests_total HTTP requests by status code.\n# TYPE agentloop_serve_http_requests_total counter\n")
	codes := make([]string, 0, len(m.requests))
	for c := range m.requests {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, c := range codes {
		fmt.Fprintf(w, "agentloop_serve_http_requests_total{code=%q} %d\n", c, m.requests[c])
	}
	fmt.Fprintf(w, "# HELP agentloop_serve_turn_duration_seconds Duration of finished turns.\n# TYPE agentloop_serve_turn_duration_seconds histogram\n")
	m.turnDur.write(w, "agentloop_serve_turn_duration_seconds")
	fmt.Fprintf(w, "# HELP agentloop_serve_http_request_duration_seconds Latency of HTTP requests (event streams excluded).\n# TYPE agentloop_serve_http_request_duration_seconds histogram\n")
	m.httpDur.write(w, "agentloop_serve_http_request_duration_seconds")
}
