package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// DefaultMaxLine is the longest line a Reader accepts unless told
// otherwise: 32 MiB, room for a user message carrying images and
// documents as large as an API request may be.
const DefaultMaxLine = 32 << 20

// ErrLineTooLong is the cause of a LineError for a line over the limit.
var ErrLineTooLong = errors.New("line too long")

// LineError is a line that could not be read as a message: too long
// (Err is ErrLineTooLong) or not decodable (Err is a *DecodeError). The
// Reader has moved past it; reading may go on.
type LineError struct {
	Line  int // the line's number, from 1, blank lines included
	Limit int // the limit, when the line was too long
	Err   error
}

func (e *LineError) Error() string {
	if errors.Is(e.Err, ErrLineTooLong) {
		return fmt.Sprintf("wire: line %d: longer than the limit of %d bytes; skipped", e.Line, e.Limit)
	}
	return fmt.Sprintf("wire: line %d: %s", e.Line, strings.TrimPrefix(e.Err.Error(), "wire: "))
}

func (e *LineError) Unwrap() error { return e.Err }

// Reader reads messages from a stream of lines, such as the engine's
// standard input. Blank lines are skipped. It is not safe for concurrent
// use.
type Reader struct {
	r    *bufio.Reader
	max  int
	line int
	buf  []byte
	err  error // a read error, returned from then on
}

// NewReader returns a Reader of r that accepts lines of up to max bytes
// (without the newline); max <= 0 means DefaultMaxLine.
func NewReader(r io.Reader, max int) *Reader {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &Reader{r: bufio.NewReaderSize(r, min(max+1, 64<<10)), max: max}
}

// Next returns the next message. At the end of the input it returns
// io.EOF. A line that is too long or does not decode gives a *LineError
// and is skipped: call Next again for the line after it. Any other error
// is the underlying reader's, and is returned from then on.
func (r *Reader) Next() (Message, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		m, err := Decode(line)
		if err != nil {
			return nil, &LineError{Line: r.line, Err: err}
		}
		return m, nil
	}
}

// readLine returns the next line without its newline (and carriage
// return), or a *LineError for one over the limit, which it reads past.
func (r *Reader) readLine() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	r.buf = r.buf[:0]
	tooLong := false
	for {
		chunk, err := r.r.ReadSlice('\n')
		if !tooLong {
			r.buf = append(r.buf, chunk...)
			if len(bytes.TrimRight(r.buf, "\r\n")) > r.max {
				tooLong, r.buf = true, r.buf[:0]
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(r.buf) == 0 && !tooLong && len(chunk) == 0 {
				r.err = io.EOF
				return nil, io.EOF
			}
			r.err = io.EOF // the last line had no newline; the end comes next
		default:
			r.err = err
			return nil, err
		}
		r.line++
		if tooLong {
			return nil, &LineError{Line: r.line, Limit: r.max, Err: ErrLineTooLong}
		}
		return bytes.TrimRight(r.buf, "\r\n"), nil
	}
}
