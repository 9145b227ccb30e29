package anthropic

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxSSELine is the longest line of an event stream: the SDK's decoder,
// which this reader replaced, allowed as much.
const maxSSELine = bufio.MaxScanTokenSize << 9

var errSSELineTooLong = errors.New("event stream line longer than 32 MiB")

// sseReader splits a text/event-stream body into events with the rules of
// the SDK's decoder it replaced: lines end in \n (a \r before it is
// dropped); "event:" names the event and each "data:" line adds its value
// and a \n to the data (one space after the colon is dropped); lines
// starting with a colon and other fields are ignored; a blank line ends an
// event, unless it has neither name nor data; an event the body ends in
// without a blank line is dropped. Unlike that decoder it allocates once
// per event (its data; the names the API sends are not copied).
type sseReader struct {
	r    *bufio.Reader
	long []byte // a line longer than r's buffer
	err  error  // the read error that ended the stream, io.EOF excepted

	typ  string // the event read by next
	data []byte
}

func newSSEReader(body io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(body, 4<<10)}
}

// next reads the next event into typ and data. It returns false at the end
// of the body or on a read error (see err). The data is a new slice each
// time, which the caller may keep.
func (s *sseReader) next() bool {
	if s.err != nil {
		return false
	}
	var typ string
	var data []byte
	for {
		line, err := s.line()
		if err != nil {
			if err != io.EOF {
				s.err = err
			}
			return false
		}
		if len(line) == 0 {
			if typ == "" && data == nil {
				continue
			}
			s.typ, s.data = typ, data
			return true
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(name) {
		case "event":
			typ = eventName(value)
		case "data":
			if data == nil {
				data = make([]byte, 0, len(value)+1)
			}
			data = append(append(data, value...), '\n')
		}
	}
}

// line returns the next line without its end, valid until the next call;
// io.EOF when the body is done. A last line without a newline is returned
// like the others.
func (s *sseReader) line() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		s.long = append(s.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = s.r.ReadSlice('\n')
			s.long = append(s.long, line...)
			if len(s.long) > maxSSELine {
				return nil, errSSELineTooLong
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

// eventName returns b as a string, without allocating for the names the
// API sends.
func eventName(b []byte) string {
	for _, n := range [...]string{"content_block_delta", "content_block_start", "content_block_stop",
		"message_start", "message_delta", "message_stop", "ping", "error"} {
		if string(b) == n {
			return n
		}
	}
	return string(b)
}
