package otel

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/agentloop/agentloop/observe"
)

// Metric names (see the package doc).
const (
	MetricTokens        = "agentloop.token.usage"
	MetricCost          = "agentloop.cost.usage"
	MetricTurns         = "agentloop.turn.count"
	MetricToolCalls     = "agentloop.tool.calls"
	MetricToolErrors    = "agentloop.tool.errors"
	MetricModelDuration = "agentloop.model.duration"
	MetricToolDuration  = "agentloop.tool.duration"
)

// Metric attribute keys besides the observe ones.
const (
	// AttrTokenType is the kind of tokens of agentloop.token.usage:
	// input, output, cache_read or cache_creation.
	AttrTokenType = "type"
	// AttrOutcome is "ok" or "error" on agentloop.model.duration.
	AttrOutcome = "outcome"
)

var tokenTypes = [4]string{"input", "output", "cache_read", "cache_creation"}

type instruments struct {
	tokens        metric.Int64Counter
	cost          metric.Float64Counter
	turns         metric.Int64Counter
	toolCalls     metric.Int64Counter
	toolErrors    metric.Int64Counter
	modelDuration metric.Float64Histogram
	toolDuration  metric.Float64Histogram
}

// newInstruments creates the instruments on m; one m refuses is a no-op.
func newInstruments(m metric.Meter) instruments {
	var nm noop.Meter
	var in instruments
	var err error
	if in.tokens, err = m.Int64Counter(MetricTokens, metric.WithUnit("{token}"),
		metric.WithDescription("Tokens used by model calls, by type")); err != nil {
		in.tokens, _ = nm.Int64Counter(MetricTokens)
	}
	if in.cost, err = m.Float64Counter(MetricCost, metric.WithUnit("USD"),
		metric.WithDescription("Cost of model calls at list prices")); err != nil {
		in.cost, _ = nm.Float64Counter(MetricCost)
	}
	if in.turns, err = m.Int64Counter(MetricTurns, metric.WithUnit("{turn}"),
		metric.WithDescription("Round trips of the agent loop")); err != nil {
		in.turns, _ = nm.Int64Counter(MetricTurns)
	}
	if in.toolCalls, err = m.Int64Counter(MetricToolCalls, metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls the model asked for")); err != nil {
		in.toolCalls, _ = nm.Int64Counter(MetricToolCalls)
	}
	if in.toolErrors, err = m.Int64Counter(MetricToolErrors, metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls whose result is an error")); err != nil {
		in.toolErrors, _ = nm.Int64Counter(MetricToolErrors)
	}
	if in.modelDuration, err = m.Float64Histogram(MetricModelDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of model calls, retries included")); err != nil {
		in.modelDuration, _ = nm.Float64Histogram(MetricModelDuration)
	}
	if in.toolDuration, err = m.Float64Histogram(MetricToolDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of tool calls, authorisation included")); err != nil {
		in.toolDuration, _ = nm.Float64Histogram(MetricToolDuration)
	}
	return in
}

// record adds the metrics of a span that ends now.
func (s *span) record(err error) {
	ctx := context.Background()
	m := &s.o.m
	secs := time.Since(s.start).Seconds()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.kind {
	case observe.KindTurn:
		m.turns.Add(ctx, 1)
	case observe.KindModel, observe.KindCompaction:
		model := s.model
		if model == "" {
			model = s.reqModel
		}
		if s.kind == observe.KindModel {
			outcome := "ok"
			if err != nil {
				outcome = "error"
			}
			m.modelDuration.Record(ctx, secs, metric.WithAttributes(
				attribute.String(observe.AttrRequestModel, s.reqModel), attribute.String(AttrOutcome, outcome)))
		}
		if model == "" {
			return // a compaction that made no call
		}
		mattr := attribute.String(observe.AttrResponseModel, model)
		for i, n := range s.tokens {
			if n != 0 {
				m.tokens.Add(ctx, n, metric.WithAttributes(mattr, attribute.String(AttrTokenType, tokenTypes[i])))
			}
		}
		if s.cost != 0 {
			m.cost.Add(ctx, s.cost, metric.WithAttributes(mattr))
		}
	case observe.KindTool:
		tool := attribute.String(observe.AttrToolName, s.tool)
		m.toolCalls.Add(ctx, 1, metric.WithAttributes(tool, attribute.String(observe.AttrPermissionDecision, s.decision)))
		if s.isError {
			m.toolErrors.Add(ctx, 1, metric.WithAttributes(tool))
		}
		m.toolDuration.Record(ctx, secs, metric.WithAttributes(tool))
	}
}

// stringer prints a value of a type attributes do not have.
type stringer struct{ v any }

func (s stringer) String() string { return fmt.Sprint(s.v) }
