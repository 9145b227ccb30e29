// Package compact holds the pure parts of conversation compaction: when a
// history is due for it, where it may be cut, the summary request, and the
// message that replaces the summarised part. The engine
// (internal/engine/compaction.go) drives it: hooks, the model call, the
// stream and the transcript are its business, not this package's.
//
// # Sizes
//
// Sizes are in tokens. Without a count from the API, a message's size is
// estimated as a quarter of the bytes of its JSON ([Estimate]), the same
// rule the context-usage report uses when the provider cannot count.
//
// # Cutting
//
// A history is cut only where the part kept starts with an assistant
// message or with a user message that holds no tool_result: a tool_use and
// its tool_result are always on the same side of the cut ([CutPoints]). A
// compaction keeps at most the latest model round ([SplitLast]); a summary
// request too large for the window loses its oldest rounds ([Fit]), then
// the heads of its largest texts ([Shrink]).
//
// # After the boundary
//
// The files the model had seen before the boundary are given back
// ([FilesSeen], [Reattach]); /compact's command and output are recorded in
// the history ([CommandRecord]).
package compact
