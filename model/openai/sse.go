package openai

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxLine is the longest line of an event stream this package reads.
const maxLine = 32 << 20

var errLineTooLong = errors.New("event stream line longer than 32 MiB")

// sseReader splits a text/event-stream body into events: "event:" names an
// event, each "data:" line adds its value (one leading space dropped) to the
// data, lines separated by \n; a blank line ends an event that has a name
// or data; comment lines (":…") and other fields are ignored; \r\n line ends
// are accepted. An event the body ends in without a blank line still counts
// (some servers close the stream right after the last data line).
type sseReader struct {
	r   *bufio.Reader
	buf []byte // a line longer than r's buffer
	err error  // the read error that ended the stream, io.EOF excepted

	name string // the event read by next
	data []byte
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 8<<10)}
}

// next reads the next event into name and data, which stay valid until the
// next call. It returns false at the end of the body or on a read error
// (see err).
func (s *sseReader) next() bool {
	if s.err != nil {
		return false
	}
	s.name, s.data = "", s.data[:0]
	seen := false    // a field of the event was read
	hasData := false // a data line was read
	for {
		line, err := s.line()
		if err != nil {
			if err != io.EOF {
				s.err = err
				return false
			}
			return seen
		}
		if len(line) == 0 {
			if seen {
				return true
			}
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "event":
			s.name, seen = string(value), true
		case "data":
			if hasData {
				s.data = append(s.data, '\n')
			}
			s.data, seen, hasData = append(s.data, value...), true, true
		}
	}
}

// line returns the next line without its end; io.EOF when the body is done.
func (s *sseReader) line() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		s.buf = append(s.buf[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = s.r.ReadSlice('\n')
			s.buf = append(s.buf, line...)
			if len(s.buf) > maxLine {
				return nil, errLineTooLong
			}
		}
		line = s.buf
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
