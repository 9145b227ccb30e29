package session

import (
	"path/filepath"
	"testing"
)

// BenchmarkHoldRelease is what the idle-lock policy adds to each run of a
// session: taking the lock back (with the repair check) and giving it up.
// BenchmarkAppendPrompt, one prompt entry written, is the baseline of the
// same run.
func BenchmarkHoldRelease(b *testing.B) {
	path := filepath.Join(b.TempDir(), "s.jsonl")
	w, err := Create(path, Envelope{SessionID: "s"})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	if err := w.Append(PromptEntry("", "hi", "default")); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := w.Release(); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Hold(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendPrompt(b *testing.B) {
	path := filepath.Join(b.TempDir(), "s.jsonl")
	w, err := Create(path, Envelope{SessionID: "s"})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	for b.Loop() {
		if err := w.Append(PromptEntry("", "hi", "default")); err != nil {
			b.Fatal(err)
		}
	}
}
