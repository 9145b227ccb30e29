package otel_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/observe"
	alotel "github.com/agentloop/agentloop/otel"
	"github.com/agentloop/agentloop/settings"
)

// Markers that must not leave the process unless a content switch is on.
const (
	secretPrompt = "PROMPT-MARKER-7731 please work"
	secretInput  = "INPUT-MARKER-4410"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"text to echo"`
}

func tools() []agentloop.Tool {
	return []agentloop.Tool{
		agentloop.NewTool("echo", "Echo the text.", func(ctx context.Context, in echoIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
			return agentloop.ToolResult{Content: []model.Content{model.TextBlock("echo: " + in.Text)}}, nil
		}, &agentloop.ToolOptions{ReadOnly: true}),
		agentloop.NewTool("fail", "Always fails.", func(ctx context.Context, in echoIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
			return agentloop.ToolResult{}, errors.New("disk on fire")
		}, &agentloop.ToolOptions{ReadOnly: true}),
		agentloop.NewTool("touch", "Changes state.", func(ctx context.Context, in echoIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
			return agentloop.ToolResult{Content: []model.Content{model.TextBlock("touched")}}, nil
		}, nil),
	}
}

func withUsage(r agentlooptest.Reply, in, out int64) agentlooptest.Reply {
	r.Usage = model.Usage{InputTokens: in, OutputTokens: out, CacheReadInputTokens: in / 10}
	return r
}

// scenario runs one Query against a scripted API that: fails the first
// request with a 500 (retried); asks for echo, fail and touch (denied by
// CanUseTool) at once, reporting a context past the compaction threshold;
// answers the summary request that follows; calls the Agent tool, whose
// subagent calls echo and answers; and ends. A PreToolUse hook runs for
// every call. It returns the run's messages.
func scenario(t *testing.T, o observe.Observer) []agentloop.Message {
	t.Helper()
	srv := agentlooptest.NewTB(t,
		agentlooptest.ServerError(),
		withUsage(agentlooptest.Blocks(
			agentlooptest.ToolUseBlock("toolu_1", "echo", map[string]any{"text": secretInput}),
			agentlooptest.ToolUseBlock("toolu_2", "fail", map[string]any{"text": "x"}),
			agentlooptest.ToolUseBlock("toolu_3", "touch", map[string]any{"text": "y"})), 45_000, 20),
		withUsage(agentlooptest.Text("SUMMARY: echoed, failed, denied."), 2000, 100),
		withUsage(agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "Check", "prompt": "Check the thing.",
			"subagent_type": "checker"}), 900, 30),
		withUsage(agentlooptest.ToolUse("toolu_sub", "echo", map[string]any{"text": "from the subagent"}), 300, 5),
		withUsage(agentlooptest.Text("Checked."), 350, 6),
		withUsage(agentlooptest.Text("All done."), 1200, 10),
	)
	p, err := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: srv.URL,
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
	if err != nil {
		t.Fatal(err)
	}
	opts := &agentloop.Options{
		Provider: p, Cwd: t.TempDir(), ConfigDir: t.TempDir(), NoSessionPersistence: true,
		SystemPrompt: "You are a test agent.", SettingSources: []settings.SettingSource{},
		Tools: []string{"Agent"}, CustomTools: tools(), AutoCompactWindow: 50_000,
		Agents: map[string]agentloop.AgentDefinition{"checker": {Description: "Checks", Prompt: "You check.", Tools: []string{"echo"}}},
		CanUseTool: func(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
			if req.ToolName == "touch" {
				return agentloop.Deny("no touching"), nil
			}
			return agentloop.Allow(), nil
		},
		Hooks: map[hooks.Event][]hooks.Matcher{hooks.PreToolUse: {{Hooks: []hooks.Callback{
			func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) { return hooks.Output{}, nil }}}}},
		Observer: o,
	}
	msgs, err := agentloop.Query(context.Background(), secretPrompt, opts).Collect()
	if err != nil {
		t.Fatal(err)
	}
	res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	if res.Subtype != "success" {
		t.Fatalf("result %s: %v", res.Subtype, res.Errors)
	}
	return msgs
}

// tree indexes ended spans.
type tree struct {
	spans []tracetest.SpanStub
	byID  map[trace.SpanID]tracetest.SpanStub
}

func newTree(spans tracetest.SpanStubs) tree {
	t := tree{spans: spans, byID: map[trace.SpanID]tracetest.SpanStub{}}
	for _, s := range spans {
		t.byID[s.SpanContext.SpanID()] = s
	}
	return t
}

func (t tree) named(name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range t.spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// parentName names a span's parent ("" for a root).
func (t tree) parentName(s tracetest.SpanStub) string {
	if !s.Parent.IsValid() {
		return ""
	}
	if p, ok := t.byID[s.Parent.SpanID()]; ok {
		return p.Name
	}
	return "?"
}

func (t tree) parent(s tracetest.SpanStub) tracetest.SpanStub { return t.byID[s.Parent.SpanID()] }

func attr(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func attrString(s tracetest.SpanStub, key string) string {
	v, _ := attr(s, key)
	return v.Emit()
}

func byCallID(spans []tracetest.SpanStub, id string) tracetest.SpanStub {
	for _, s := range spans {
		if attrString(s, observe.AttrToolCallID) == id {
			return s
		}
	}
	return tracetest.SpanStub{}
}

// contains reports whether any attribute or event attribute of any span
// holds text.
func contains(spans tracetest.SpanStubs, text string) bool {
	for _, s := range spans {
		for _, kv := range s.Attributes {
			if strings.Contains(kv.Value.Emit(), text) {
				return true
			}
		}
		for _, e := range s.Events {
			for _, kv := range e.Attributes {
				if strings.Contains(kv.Value.Emit(), text) {
					return true
				}
			}
		}
	}
	return false
}

func TestSpanTree(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	msgs := scenario(t, alotel.New(alotel.Config{TracerProvider: tp, MeterProvider: sdkmetric.NewMeterProvider()}))
	spans := exp.GetSpans()
	tr := newTree(spans)

	roots := tr.named("invoke_agent agentloop")
	if len(roots) != 1 || roots[0].Parent.IsValid() {
		t.Fatalf("session spans: %d (want one root)", len(roots))
	}
	root := roots[0]
	res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	if got := attrString(root, observe.AttrSessionID); got != res.SessionID {
		t.Errorf("session id %q, want %q", got, res.SessionID)
	}
	if got := attrString(root, observe.AttrResultSubtype); got != "success" {
		t.Errorf("result subtype %q", got)
	}
	for _, s := range spans {
		if s.SpanContext.TraceID() != root.SpanContext.TraceID() {
			t.Errorf("span %q is in another trace", s.Name)
		}
	}

	// Every span's parent, by name.
	parents := map[string][]string{}
	for _, s := range spans {
		parents[s.Name] = append(parents[s.Name], tr.parentName(s))
	}
	turnParents := parents["agentloop.turn"]
	var mainTurns, subTurns int
	for _, p := range turnParents {
		switch p {
		case "invoke_agent agentloop":
			mainTurns++
		case "invoke_agent subagent":
			subTurns++
		default:
			t.Errorf("a turn under %q", p)
		}
	}
	if mainTurns != 3 || subTurns != 2 {
		t.Errorf("turns: %d main, %d subagent; want 3 and 2", mainTurns, subTurns)
	}
	for _, name := range []string{"execute_tool echo", "execute_tool fail", "execute_tool touch", "execute_tool Agent"} {
		for _, p := range parents[name] {
			if p != "agentloop.turn" {
				t.Errorf("%s under %q, want a turn", name, p)
			}
		}
	}
	if diff := cmp.Diff([]string{"execute_tool Agent"}, parents["invoke_agent subagent"]); diff != "" {
		t.Errorf("subagent span parent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"invoke_agent agentloop"}, parents["agentloop.compaction"]); diff != "" {
		t.Errorf("compaction span parent (-want +got):\n%s", diff)
	}
	for _, p := range parents["agentloop.hook PreToolUse"] {
		if !strings.HasPrefix(p, "execute_tool ") {
			t.Errorf("PreToolUse hook span under %q, want a tool span", p)
		}
	}
	// echo and Agent of the main loop, echo of the subagent; touch is
	// asked (CanUseTool) and fail runs without asking, both after the
	// hook. Every call gets its PreToolUse dispatch.
	if n := len(parents["agentloop.hook PreToolUse"]); n != 5 {
		t.Errorf("%d PreToolUse hook spans, want 5", n)
	}

	// The subagent's echo is under the subagent's turn, under the Agent call.
	echoes := tr.named("execute_tool echo")
	sub := byCallID(echoes, "toolu_sub")
	if chain := []string{tr.parentName(sub), tr.parentName(tr.parent(sub)), tr.parentName(tr.parent(tr.parent(sub)))}; !cmp.Equal(chain,
		[]string{"agentloop.turn", "invoke_agent subagent", "execute_tool Agent"}) {
		t.Errorf("subagent echo ancestry = %v", chain)
	}

	// The model calls: the first had one retry, on a 500.
	models := tr.named("chat " + attrString(root, observe.AttrRequestModel))
	if len(models) < 4 {
		t.Fatalf("%d model spans of the main model", len(models))
	}
	var retried []tracetest.SpanStub
	for _, m := range models {
		for _, e := range m.Events {
			if e.Name == observe.EventRetry {
				retried = append(retried, m)
				got := map[string]string{}
				for _, kv := range e.Attributes {
					got[string(kv.Key)] = kv.Value.Emit()
				}
				if got[observe.AttrRetryStatus] != "500" || got[observe.AttrRetryAttempt] != "1" || got[observe.AttrRetryKind] == "" {
					t.Errorf("retry event attributes = %v", got)
				}
			}
		}
		if tr.parentName(m) != "agentloop.turn" {
			t.Errorf("model span under %q", tr.parentName(m))
		}
	}
	if len(retried) != 1 {
		t.Fatalf("%d model spans with a retry event, want 1", len(retried))
	}
	first := retried[0]
	for key, want := range map[string]string{
		observe.AttrSystem: "anthropic", observe.AttrOperationName: "chat", observe.AttrInputTokens: "45000",
		observe.AttrOutputTokens: "20", observe.AttrCacheReadTokens: "4500", observe.AttrFinishReasons: `["tool_use"]`,
	} {
		if got := attrString(first, key); got != want {
			t.Errorf("first model span %s = %q, want %q", key, got, want)
		}
	}
	if v, _ := attr(first, observe.AttrCost); v.AsFloat64() <= 0 {
		t.Errorf("first model span cost = %v", v.AsFloat64())
	}

	// Tool outcomes and decisions.
	fail := tr.named("execute_tool fail")[0]
	touch := tr.named("execute_tool touch")[0]
	echo := byCallID(echoes, "toolu_1")
	for _, c := range []struct {
		span             tracetest.SpanStub
		isError, ran     string
		decision, status string
	}{
		{echo, "false", "true", "allow", "Unset"},
		{fail, "true", "true", "allow", "Error"},
		{touch, "true", "false", "deny", "Error"},
	} {
		got := []string{attrString(c.span, observe.AttrToolIsError), attrString(c.span, observe.AttrToolRan),
			attrString(c.span, observe.AttrPermissionDecision), c.span.Status.Code.String()}
		if want := []string{c.isError, c.ran, c.decision, c.status}; !cmp.Equal(got, want) {
			t.Errorf("%s: is_error, ran, decision, status = %v, want %v", c.span.Name, got, want)
		}
	}

	// The compaction.
	comp := tr.named("agentloop.compaction")[0]
	pre, _ := attr(comp, observe.AttrCompactPreTokens)
	post, _ := attr(comp, observe.AttrCompactPostTokens)
	if attrString(comp, observe.AttrCompacted) != "true" || attrString(comp, observe.AttrCompactTrigger) != "auto" ||
		pre.AsInt64() <= post.AsInt64() || post.AsInt64() <= 0 {
		t.Errorf("compaction: done %s trigger %s pre %d post %d", attrString(comp, observe.AttrCompacted),
			attrString(comp, observe.AttrCompactTrigger), pre.AsInt64(), post.AsInt64())
	}

	// No contents without the switches.
	if contains(spans, "PROMPT-MARKER") || contains(spans, secretInput) {
		t.Error("a span carries the prompt or a tool input, with no content switch on")
	}
}

func TestContentSwitches(t *testing.T) {
	for _, c := range []struct {
		name                  string
		cfg                   alotel.Config
		wantPrompt, wantInput bool
	}{
		{"off", alotel.Config{}, false, false},
		{"prompts", alotel.Config{LogUserPrompts: true}, true, false},
		{"tools", alotel.Config{LogToolDetails: true}, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			defer tp.Shutdown(context.Background())
			c.cfg.TracerProvider, c.cfg.MeterProvider = tp, sdkmetric.NewMeterProvider()
			scenario(t, alotel.New(c.cfg))
			spans := exp.GetSpans()
			if got := contains(spans, "PROMPT-MARKER"); got != c.wantPrompt {
				t.Errorf("prompt attached = %v, want %v", got, c.wantPrompt)
			}
			if got := contains(spans, secretInput); got != c.wantInput {
				t.Errorf("tool input attached = %v, want %v", got, c.wantInput)
			}
			if c.wantPrompt {
				root := newTree(spans).named("invoke_agent agentloop")[0]
				if got := attrString(root, observe.AttrPrompt); got != secretPrompt {
					t.Errorf("gen_ai.prompt = %q", got)
				}
			}
			if c.wantInput {
				fail := newTree(spans).named("execute_tool fail")[0]
				if got := attrString(fail, observe.AttrToolResult); !strings.Contains(got, "disk on fire") {
					t.Errorf("fail result = %q", got)
				}
			}
		})
	}
}

func TestTraceParentContinued(t *testing.T) {
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	t.Setenv("TRACEPARENT", "00-"+traceID+"-"+parentID+"-01")
	t.Setenv("TRACESTATE", "vendor=value")
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	scenario(t, alotel.New(alotel.Config{TracerProvider: tp, Parent: alotel.ParentFromEnv()}))
	spans := exp.GetSpans()
	root := newTree(spans).named("invoke_agent agentloop")[0]
	if got := root.SpanContext.TraceID().String(); got != traceID {
		t.Errorf("trace id %s, want the caller's %s", got, traceID)
	}
	if got := root.Parent.SpanID().String(); got != parentID || !root.Parent.IsRemote() {
		t.Errorf("parent %s (remote %v), want the caller's %s", got, root.Parent.IsRemote(), parentID)
	}
	if got := root.SpanContext.TraceState().Get("vendor"); got != "value" {
		t.Errorf("trace state vendor = %q", got)
	}
	for _, s := range spans {
		if s.SpanContext.TraceID().String() != traceID {
			t.Errorf("span %q in trace %s", s.Name, s.SpanContext.TraceID())
		}
	}
}

func TestMetricsMatchResult(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tp := sdktrace.NewTracerProvider()
	msgs := scenario(t, alotel.New(alotel.Config{TracerProvider: tp, MeterProvider: mp}))
	res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	ints := map[string]int64{}
	floats := map[string]float64{}
	counts := map[string]uint64{}
	tokensByType := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					ints[m.Name] += p.Value
					if m.Name == alotel.MetricTokens {
						typ, _ := p.Attributes.Value(alotel.AttrTokenType)
						tokensByType[typ.AsString()] += p.Value
					}
				}
			case metricdata.Sum[float64]:
				for _, p := range d.DataPoints {
					floats[m.Name] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					counts[m.Name] += p.Count
				}
			}
		}
	}
	var want = map[string]int64{}
	for _, u := range res.ModelUsage {
		want["input"] += u.InputTokens
		want["output"] += u.OutputTokens
		want["cache_read"] += u.CacheReadInputTokens
		want["cache_creation"] += u.CacheCreationInputTokens
	}
	for k, v := range want {
		if v == 0 {
			delete(want, k) // a type no call used has no data point
		}
	}
	if diff := cmp.Diff(want, tokensByType); diff != "" {
		t.Errorf("tokens by type (-result +metrics):\n%s", diff)
	}
	if math.Abs(floats[alotel.MetricCost]-res.TotalCostUSD) > 1e-9 || res.TotalCostUSD == 0 {
		t.Errorf("cost metric %v, result total_cost_usd %v", floats[alotel.MetricCost], res.TotalCostUSD)
	}
	var calls, errs int64
	for _, m := range msgs {
		u, ok := m.(*agentloop.UserMessage)
		if !ok {
			continue
		}
		for _, b := range u.Message.Content {
			if b.Type == model.TypeToolResult {
				calls++
				if b.IsError != nil && *b.IsError {
					errs++
				}
			}
		}
	}
	if ints[alotel.MetricToolCalls] != calls || ints[alotel.MetricToolErrors] != errs || calls != 5 || errs != 2 {
		t.Errorf("tool calls %d errors %d; the stream shows %d results, %d errors (want 5, 2)",
			ints[alotel.MetricToolCalls], ints[alotel.MetricToolErrors], calls, errs)
	}
	if ints[alotel.MetricTurns] != 5 {
		t.Errorf("turns metric %d, want 5 (3 main, 2 subagent)", ints[alotel.MetricTurns])
	}
	if counts[alotel.MetricToolDuration] != 5 || counts[alotel.MetricModelDuration] != 5 {
		t.Errorf("duration samples: tools %d (want 5), model calls %d (want 5)",
			counts[alotel.MetricToolDuration], counts[alotel.MetricModelDuration])
	}
}

// TestFallbackNoted: a model that stays overloaded ends its span failed,
// with its retries as events, and the fallback model's span names it.
func TestFallbackNoted(t *testing.T) {
	srv := agentlooptest.NewTB(t)
	srv.SetRouter(func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
		if strings.Contains(r.Params.Model, "opus") {
			return agentlooptest.Overloaded(), true
		}
		return agentlooptest.Text("Fallback here."), true
	})
	p, err := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: srv.URL,
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
	if err != nil {
		t.Fatal(err)
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	opts := &agentloop.Options{Provider: p, Cwd: t.TempDir(), NoSessionPersistence: true, SettingSources: []settings.SettingSource{},
		Model: "opus", FallbackModels: []string{"sonnet"}, Tools: []string{},
		Observer: alotel.New(alotel.Config{TracerProvider: tp})}
	if _, err := agentloop.Query(context.Background(), "hi", opts).Result(); err != nil {
		t.Fatal(err)
	}
	var main, fallback []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		switch {
		case strings.HasPrefix(s.Name, "chat ") && strings.Contains(s.Name, "opus"):
			main = append(main, s)
		case strings.HasPrefix(s.Name, "chat "):
			fallback = append(fallback, s)
		}
	}
	if len(main) != 1 || len(fallback) != 1 {
		t.Fatalf("%d spans of the main model, %d of the fallback; want 1 and 1", len(main), len(fallback))
	}
	if main[0].Status.Code.String() != "Error" || len(main[0].Events) == 0 {
		t.Errorf("main model span: status %v, %d retry events", main[0].Status.Code, len(main[0].Events))
	}
	if got, want := attrString(fallback[0], observe.AttrFallbackFrom), attrString(main[0], observe.AttrRequestModel); got != want || got == "" {
		t.Errorf("fallback_from = %q, want %q", got, want)
	}
	if fallback[0].Parent.SpanID() != main[0].Parent.SpanID() {
		t.Error("the fallback call is not in the same turn as the call it replaces")
	}
}
