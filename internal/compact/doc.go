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
// its tool_result are always on the same side of the cut ([CutPoints]).
package compact
