//go:build unix

package tools

import (
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// captureState is what a capture holds, for comparing two.
type captureState struct {
	Text, Failure string
	Total         int64
}

func stateOf(c *bashCapture) captureState {
	return captureState{Text: c.text(), Failure: c.failureText(bashFailureChars), Total: c.total}
}

// TestBashCaptureReadFrom: reading a stream through ReadFrom, in any
// pieces the reader hands out, leaves the capture as writing it does, and
// a read error other than the end is returned.
func TestBashCaptureReadFrom(t *testing.T) {
	long := strings.Repeat("línea de salida\n", 9000) // past the head and the growth steps
	for _, tc := range []struct {
		name string
		in   string
		wrap func(io.Reader) io.Reader
	}{
		{"short", "\n\n  hi\n", nil},
		{"long", long, nil},
		{"long one byte at a time", long[:40000], iotest.OneByteReader},
		{"long half reads", long, iotest.HalfReader},
		{"data with EOF", long, iotest.DataErrReader},
		{"empty", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := newBashCapture(bashMaxOutputChars, bashLeadBlankLines)
			_, _ = want.Write([]byte(tc.in))
			var r io.Reader = strings.NewReader(tc.in)
			if tc.wrap != nil {
				r = tc.wrap(r)
			}
			got := newBashCapture(bashMaxOutputChars, bashLeadBlankLines)
			n, err := got.ReadFrom(r)
			if err != nil || n != int64(len(tc.in)) {
				t.Fatalf("ReadFrom = %d, %v; want %d, nil", n, err, len(tc.in))
			}
			if d := cmp.Diff(stateOf(want), stateOf(got)); d != "" {
				t.Errorf("capture (-written +read):\n%s", d)
			}
		})
	}
	boom := errors.New("boom")
	c := newBashCapture(bashMaxOutputChars, bashLeadBlankLines)
	n, err := c.ReadFrom(io.MultiReader(strings.NewReader("partial"), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) || n != 7 || c.text() != "partial" {
		t.Errorf("ReadFrom with a failing reader = %d, %v, text %q; want 7, boom, %q", n, err, c.text(), "partial")
	}
}

// sizeRecorder reads from r and records the size of every buffer it is
// handed.
type sizeRecorder struct {
	r     io.Reader
	sizes []int
}

func (s *sizeRecorder) Read(p []byte) (int, error) {
	s.sizes = append(s.sizes, len(p))
	return s.r.Read(p)
}

// TestBashCaptureReadBuffer: a stream is read through a small buffer
// that doubles only while reads fill it, up to 32 KiB.
func TestBashCaptureReadBuffer(t *testing.T) {
	rec := &sizeRecorder{r: strings.NewReader(strings.Repeat("x", 200_000))}
	if _, err := newBashCapture(bashMaxOutputChars, bashLeadBlankLines).ReadFrom(rec); err != nil {
		t.Fatal(err)
	}
	want := []int{1 << 10, 2 << 10, 4 << 10, 8 << 10, 16 << 10, 32 << 10}
	if d := cmp.Diff(want, rec.sizes[:len(want)]); d != "" {
		t.Errorf("first buffer sizes (-want +got):\n%s", d)
	}
	for _, n := range rec.sizes[len(want):] {
		if n != 32<<10 {
			t.Fatalf("buffer of %d bytes after the growth; sizes %v", n, rec.sizes)
		}
	}
}

// TestBashCapturePipeCopyIsSmall: copying a command's pipe into a capture
// as os/exec does (io.Copy from the pipe's *os.File) allocates a few KiB
// for a line of output, not the 32 KiB buffer io.Copy would give each
// stream of each command for as long as it runs. The count is the
// process's, so the least of three copies is taken: a goroutine left
// by another test could allocate during one, not during all.
func TestBashCapturePipeCopyIsSmall(t *testing.T) {
	least := ^uint64(0)
	for range 3 {
		least = min(least, pipeCopyAllocs(t))
	}
	if least > 16<<10 {
		t.Errorf("io.Copy of one line allocated %d bytes; want at most 16 KiB", least)
	}
}

// pipeCopyAllocs copies a pipe holding one line into a capture and
// returns the bytes the process allocated meanwhile.
func pipeCopyAllocs(t *testing.T) uint64 {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	go func() {
		_, _ = pw.Write([]byte("hi\n"))
		pw.Close()
	}()
	c := newBashCapture(bashMaxOutputChars, bashLeadBlankLines)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := io.Copy(c, pr); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if c.text() != "hi" {
		t.Fatalf("text = %q", c.text())
	}
	return after.TotalAlloc - before.TotalAlloc
}
