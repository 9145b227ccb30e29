// Package otlp sends OpenTelemetry spans and metrics to a collector over
// OTLP/HTTP with protobuf bodies, with no dependency on gRPC or on the
// generated OTLP protobuf types.
//
// The official exporters (otlptracehttp, otlpmetrichttp) link
// go.opentelemetry.io/proto/otlp, google.golang.org/grpc and the protobuf
// runtime into every program that uses them, which roughly doubles the
// agentloop binary and its start-up memory. This package writes the few
// OTLP messages it needs by hand, with its own few functions of the
// protobuf wire format (pbwire.go; google.golang.org/protobuf is not
// linked):
//
//   - [AppendTraces] encodes an ExportTraceServiceRequest
//     (opentelemetry/proto/collector/trace/v1) from SDK spans;
//   - [AppendMetrics] encodes an ExportMetricsServiceRequest
//     (opentelemetry/proto/collector/metrics/v1) from SDK metric data;
//   - [TraceExporter] and [MetricExporter] post them to a collector,
//     configured by [ConfigFromEnv] from the OTEL_EXPORTER_OTLP_*
//     variables of the OTLP exporter specification.
//
// Field numbers are those of opentelemetry-proto v1 (the .proto files of
// go.opentelemetry.io/proto/otlp v1.x); the tests decode every encoder's
// output with the official generated types.
package otlp
