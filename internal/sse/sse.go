// Package sse reads text/event-stream bodies, the framing of the model
// providers' streamed replies.
//
// The rules are those of the Anthropic SDK's decoder, which the reader
// replaced: lines end in \n (a \r before it is dropped); "event:" names the
// event and each "data:" line adds its value and a \n to the data (one
// space after the colon is dropped); lines starting with a colon and other
// fields are ignored; a blank line ends an event, unless it has neither
// name nor data. An event the body ends in without a blank line is dropped
// unless [Reader.KeepUnterminated] is set.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// MaxLine is the longest line a Reader accepts: what the Anthropic SDK's
// decoder allowed.
const MaxLine = bufio.MaxScanTokenSize << 9

// ErrLineTooLong ends a stream with a line longer than MaxLine.
var ErrLineTooLong = errors.New("event stream line longer than 32 MiB")

// Reader splits an event stream into events. It allocates once per event
// with data (the data, which the caller may keep); event names listed
// when it was made are returned without allocating. Not safe for
// concurrent use.
type Reader struct {
	// KeepUnterminated makes an event the body ends in without a blank
	// line count (some servers close the stream right after the last
	// data line); by default it is dropped, as the Anthropic SDK does.
	KeepUnterminated bool

	r     *bufio.Reader
	names []string
	long  []byte // a line longer than r's buffer
	// pooled: r came from the pool.
	pooled bool
	err    error // the read error that ended the stream, io.EOF excepted

	event string
	data  []byte
}

// NewReader returns a Reader of body, buffering bufSize bytes; names are
// the event names it should not allocate for. Buffers of [PooledSize]
// come from a pool: [Reader.Release] gives them back.
func NewReader(body io.Reader, bufSize int, names ...string) *Reader {
	if bufSize == PooledSize {
		br := pool.Get().(*bufio.Reader)
		br.Reset(body)
		return &Reader{r: br, names: names, pooled: true}
	}
	return &Reader{r: bufio.NewReaderSize(body, bufSize), names: names}
}

// PooledSize is the buffer size NewReader takes from a pool: only a
// stream being read holds one, so a thousand sessions waiting for their
// replies hold none.
const PooledSize = 4 << 10

var pool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, PooledSize) }}

// Release gives the reader's buffer back to the pool when it came from
// it; the reader must not be used afterwards. Calling it is optional.
func (s *Reader) Release() {
	if s.pooled && s.r != nil {
		s.r.Reset(nil)
		pool.Put(s.r)
	}
	s.r, s.err = nil, errReleased
}

var errReleased = errors.New("sse: reader released")

// Next reads the next event. It returns false at the end of the body or
// on a read error (see Err).
func (s *Reader) Next() bool {
	if s.err != nil {
		return false
	}
	var event string
	var data []byte
	for {
		line, err := s.line()
		if err != nil {
			if err != io.EOF {
				s.err = err
				return false
			}
			if s.KeepUnterminated && (event != "" || data != nil) {
				s.event, s.data = event, data
				s.err = io.EOF // the next call ends the stream
				return true
			}
			return false
		}
		if len(line) == 0 {
			if event == "" && data == nil {
				continue
			}
			s.event, s.data = event, data
			return true
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(name) {
		case "event":
			event = s.intern(value)
		case "data":
			if data == nil {
				data = make([]byte, 0, len(value)+1)
			}
			data = append(append(data, value...), '\n')
		}
	}
}

// Event is the name of the event Next read ("" when it had none).
func (s *Reader) Event() string { return s.event }

// Data is the data of the event Next read: each data line's value
// followed by \n, nil when it had no data line. It is a new slice for
// each event, which the caller may keep.
func (s *Reader) Data() []byte { return s.data }

// Err is the error that ended the stream, nil at its normal end.
func (s *Reader) Err() error {
	if s.err == io.EOF {
		return nil
	}
	return s.err
}

// line returns the next line without its end, valid until the next call;
// io.EOF when the body is done. A last line without a newline is returned
// like the others.
func (s *Reader) line() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		s.long = append(s.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = s.r.ReadSlice('\n')
			s.long = append(s.long, line...)
			if len(s.long) > MaxLine {
				return nil, ErrLineTooLong
			}
		}
		line = s.long
	}
	switch {
	case err == io.EOF && len(line) == 0:
		return nil, io.EOF
	case err != nil && err != io.EOF:
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), nil
}

// intern returns b as a string, without allocating for the names given
// to NewReader.
func (s *Reader) intern(b []byte) string {
	for _, n := range s.names {
		if string(b) == n {
			return n
		}
	}
	return string(b)
}
