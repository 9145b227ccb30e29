package wire

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// readAll reads r to its end, noting each message's type or the error.
func readAll(t *testing.T, r *Reader) []string {
	t.Helper()
	var got []string
	for range 1 << 20 {
		m, err := r.Next()
		switch {
		case errors.Is(err, io.EOF):
			return got
		case err != nil:
			got = append(got, "error: "+err.Error())
		default:
			got = append(got, m.Type())
		}
	}
	t.Fatal("no end after 1<<20 reads")
	return nil
}

// TestReader: lines are read one by one, blank ones skipped; a line over
// the limit or one that does not decode is an error naming its number
// (and the limit), and reading goes on with the next line.
func TestReader(t *testing.T) {
	long := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", 100) + `"}}`
	fits := `{"type":"keep_alive","startup_mark":"` + strings.Repeat("y", 64-len(`{"type":"keep_alive","startup_mark":""}`)) + `"}`
	if len(fits) != 64 {
		t.Fatalf("fits is %d bytes", len(fits))
	}
	cases := []struct {
		name  string
		input string
		want  []string
	}{
		{"empty", "", nil},
		{"one line", `{"type":"keep_alive"}` + "\n", []string{"keep_alive"}},
		{"no final newline", `{"type":"keep_alive"}` + "\n" + `{"type":"control_cancel_request","request_id":"a"}`,
			[]string{"keep_alive", "control_cancel_request"}},
		{"blank lines and CRLF", "\n  \n{\"type\":\"keep_alive\"}\r\n\r\n{\"type\":\"keep_alive\"}\n\n", []string{"keep_alive", "keep_alive"}},
		{"exactly the limit", fits + "\n" + fits, []string{"keep_alive", "keep_alive"}},
		{"over the limit, then more", long + "\n" + `{"type":"keep_alive"}` + "\n",
			[]string{"error: wire: line 1: longer than the limit of 64 bytes; skipped", "keep_alive"}},
		{"over the limit at the end", `{"type":"keep_alive"}` + "\n" + long,
			[]string{"keep_alive", "error: wire: line 2: longer than the limit of 64 bytes; skipped"}},
		{"one over", fits + "z\n" + fits + "\n", []string{"error: wire: line 1: longer than the limit of 64 bytes; skipped", "keep_alive"}},
		{"bad lines go on", "{\"type\":\"nope\"}\n\nnot json\n{\"type\":\"keep_alive\"}\n",
			[]string{`error: wire: line 1: type: unknown line type "nope" (want user, control_request, control_response, control_cancel_request or keep_alive)`,
				"error: wire: line 3: invalid JSON at column 2: invalid character 'o' in literal null (expecting 'u')", "keep_alive"}},
	}
	for _, tc := range cases {
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/chunked=%v", tc.name, chunked), func(t *testing.T) {
				var in io.Reader = strings.NewReader(tc.input)
				if chunked {
					in = iotest.OneByteReader(in)
				}
				got := readAll(t, NewReader(in, 64))
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestReaderErrors: a LineError unwraps to its cause; a read error ends
// the reading and is returned again.
func TestReaderErrors(t *testing.T) {
	r := NewReader(strings.NewReader(strings.Repeat("a", 30)+"\n{\"type\":\"user\"}\n"), 20)
	_, err := r.Next()
	var le *LineError
	if !errors.As(err, &le) || !errors.Is(err, ErrLineTooLong) || le.Line != 1 || le.Limit != 20 {
		t.Errorf("first: %v", err)
	}
	_, err = r.Next()
	var de *DecodeError
	if !errors.As(err, &de) || !errors.As(err, &le) || le.Line != 2 {
		t.Errorf("second: %v", err)
	}
	boom := errors.New("boom")
	r = NewReader(io.MultiReader(strings.NewReader(`{"type":"keep_alive"}`+"\n"), iotest.ErrReader(boom)), 0)
	if m, err := r.Next(); err != nil || m.Type() != TypeKeepAlive {
		t.Fatalf("%v %v", m, err)
	}
	for range 2 {
		if _, err := r.Next(); !errors.Is(err, boom) {
			t.Errorf("error %v, want boom", err)
		}
	}
	if NewReader(strings.NewReader(""), 0).max != DefaultMaxLine {
		t.Error("no default limit")
	}
}
