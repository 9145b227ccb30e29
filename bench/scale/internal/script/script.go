// Package script is the scale benchmark's model: the fixture tree its tools
// work on and the tool call the scripted API answers at each step of a
// session. The server and the benchmark program share it, so they agree on
// file names without talking to each other.
package script

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Fixture shape: Dirs directories of FilesPerDir files of LinesPerFile lines.
const (
	Dirs         = 4
	FilesPerDir  = 12
	LinesPerFile = 120
)

// GrepPattern is the pattern of every Grep call; it matches some lines of
// some files of the fixture.
const GrepPattern = `func [A-Z]\w+Handler`

// Files returns the fixture's files as slash-separated paths relative to
// its root, in a fixed order.
func Files() []string {
	files := make([]string, 0, Dirs*FilesPerDir)
	for d := range Dirs {
		for f := range FilesPerDir {
			files = append(files, fmt.Sprintf("pkg%d/file%02d.go", d, f))
		}
	}
	return files
}

// content returns the text of the fixture file with index i: Go-like source
// whose lines differ from file to file, a third of the files holding a line
// GrepPattern matches.
func content(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package pkg%d\n\n", i/FilesPerDir)
	for l := 2; l < LinesPerFile; l++ {
		switch {
		case l%40 == 10 && i%3 == 0:
			fmt.Fprintf(&b, "func Serve%dHandler(w int) int { return w + %d }\n", l, i)
		case l%7 == 0:
			fmt.Fprintf(&b, "// comment %d of file %d: the quick brown fox jumps over the lazy dog\n", l, i)
		default:
			fmt.Fprintf(&b, "var v%d_%d = compute(%d, %q)\n", i, l, l*i, "value")
		}
	}
	return b.String()
}

// WriteFixture creates the fixture tree under root (which may exist) and
// returns root as an absolute path.
func WriteFixture(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("fixture root %q: %w", root, err)
	}
	for i, rel := range Files() {
		p := filepath.Join(abs, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("fixture: %w", err)
		}
		if err := os.WriteFile(p, []byte(content(i)), 0o644); err != nil {
			return "", fmt.Errorf("fixture: %w", err)
		}
	}
	return abs, nil
}

// Answer is the text the scripted model ends every session with.
const Answer = "done"

// Call is one tool call of the script.
type Call struct {
	Name  string
	Input map[string]any
}

// Step returns the tool call for a session's step done (0-based: done tool
// results are already in its history) under the fixture root. The tools
// rotate: Read of a file that changes with the step, Grep over the tree,
// Bash echo.
func Step(root string, done int) Call {
	switch done % 3 {
	case 0:
		files := Files()
		rel := files[(done/3)%len(files)]
		return Call{Name: "Read", Input: map[string]any{"file_path": filepath.Join(root, filepath.FromSlash(rel))}}
	case 1:
		return Call{Name: "Grep", Input: map[string]any{"pattern": GrepPattern, "path": root}}
	default:
		return Call{Name: "Bash", Input: map[string]any{"command": fmt.Sprintf("echo step %d", done)}}
	}
}

// Workloads: which tool calls a session makes.
const (
	// WorkloadMixed rotates Read, Grep and Bash ([Step]).
	WorkloadMixed = "mixed"
	// WorkloadRead makes every call a Read of a file that changes with
	// the step ([ReadStep]): the workload a runner with nothing but a Read
	// tool can run too.
	WorkloadRead = "read"
)

// StepFor returns the tool call of step done for workload (WorkloadMixed
// or WorkloadRead).
func StepFor(workload, root string, done int) Call {
	if workload == WorkloadRead {
		return ReadStep(root, done)
	}
	return Step(root, done)
}

// ReadStep returns the tool call of step done of WorkloadRead: a Read of
// the done-th file of the fixture, in Files order.
func ReadStep(root string, done int) Call {
	files := Files()
	return Call{Name: "Read", Input: map[string]any{"file_path": filepath.Join(root, filepath.FromSlash(files[done%len(files)]))}}
}

// ToolResults counts the tool results a history carries: every user
// message after the first that holds tool results is one step done. It
// takes the number of messages in the history, which for this script's
// strictly alternating conversations is 1 + 2×steps.
func ToolResults(messages int) int {
	if messages < 1 {
		return 0
	}
	return (messages - 1) / 2
}
