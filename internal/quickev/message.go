package quickev

import (
	"github.com/agentloop/agentloop/internal/jsonscan"
	"github.com/agentloop/agentloop/model"
)

// The events that open and close a reply (message_start, message_delta)
// come once per reply each, but decoding them with encoding/json took as
// much as all of the reply's other events (their usage objects above all).
// The readers below accept the compact shape the API sends: no white
// space, keys among the ones the provider reads, each once and spelled
// exactly (encoding/json would also match other cases), strings without
// \u escapes, counts as plain non-negative integers. Anything else is left
// to encoding/json.

// Start is a message_start event's message, as [ReadStart] reads it.
type Start struct {
	ID, Type, Role, Model    string
	StopReason, StopSequence *string // nil for null or absent
	Usage                    model.Usage
}

// ReadStart reads a message_start event of the compact shape
//
//	{"type":"message_start","message":{"id":"…","type":"message",…,"usage":{…}}}
//
// whose message has only the keys id, type, role, model, content (an
// empty array), stop_reason, stop_sequence and usage (see [ReadUsage]).
func ReadStart(data []byte) (st Start, ok bool) {
	var msg []byte
	var seen uint8
	ok = fields(data, func(kb, v []byte) bool {
		switch key := string(kb); {
		case key == "type" && once(&seen, 1):
			return string(v) == `"message_start"`
		case key == "message" && once(&seen, 2):
			msg = v
			return true
		}
		return false
	})
	if !ok || msg == nil {
		return st, false
	}
	var mseen uint8
	ok = fields(msg, func(kb, v []byte) bool {
		switch key := string(kb); {
		case key == "id" && once(&mseen, 1):
			return str(v, &st.ID)
		case key == "type" && once(&mseen, 2):
			return str(v, &st.Type)
		case key == "role" && once(&mseen, 4):
			return str(v, &st.Role)
		case key == "model" && once(&mseen, 8):
			return str(v, &st.Model)
		case key == "content" && once(&mseen, 16):
			return string(v) == "[]"
		case key == "stop_reason" && once(&mseen, 32):
			return optStr(v, &st.StopReason)
		case key == "stop_sequence" && once(&mseen, 64):
			return optStr(v, &st.StopSequence)
		case key == "usage" && once(&mseen, 128):
			return ReadUsage(v, &st.Usage)
		}
		return false
	})
	return st, ok
}

// MessageDelta is a message_delta event, as [ReadMessageDelta] reads it.
type MessageDelta struct {
	StopReason *string // nil: leave the reply's as it is
	// SetSequence says the delta carries stop_sequence, StopSequence its
	// value (nil for null).
	SetSequence  bool
	StopSequence *string
	// Usage is the usage object verbatim, nil when absent; the caller
	// merges it into the reply's with ReadUsage.
	Usage []byte
}

// ReadMessageDelta reads a message_delta event of the compact shape
//
//	{"type":"message_delta","delta":{"stop_reason":"…","stop_sequence":null},"usage":{…}}
//
// with delta's keys among stop_reason and stop_sequence (and delta
// present). The usage object is delimited, not read: the caller reads it
// with [ReadUsage] onto the reply's usage and, if that declines, decodes
// the whole event the general way.
func ReadMessageDelta(data []byte) (d MessageDelta, ok bool) {
	var delta []byte
	var seen uint8
	ok = fields(data, func(kb, v []byte) bool {
		switch key := string(kb); {
		case key == "type" && once(&seen, 1):
			return string(v) == `"message_delta"`
		case key == "delta" && once(&seen, 2):
			delta = v
			return true
		case key == "usage" && once(&seen, 4):
			d.Usage = v
			return len(v) > 0 && v[0] == '{'
		}
		return false
	})
	if !ok || delta == nil {
		return d, false
	}
	var dseen uint8
	ok = fields(delta, func(kb, v []byte) bool {
		switch key := string(kb); {
		case key == "stop_reason" && once(&dseen, 1):
			return optStr(v, &d.StopReason)
		case key == "stop_sequence" && once(&dseen, 2):
			d.SetSequence = true
			return optStr(v, &d.StopSequence)
		}
		return false
	})
	return d, ok
}

// ReadUsage reads the compact usage object data onto u as encoding/json
// would decode it into u: the fields data carries are set, the nested
// cache_creation and server_tool_use objects merged into u's (made when
// nil; the caller passes u with its nested objects its own to change). It
// accepts only the keys of model.Usage, each once, with non-negative
// integer counts and strings (no null); on false, u may be half changed.
func ReadUsage(data []byte, u *model.Usage) bool {
	var seen uint8
	return fields(data, func(kb, v []byte) bool {
		switch key := string(kb); {
		case key == "input_tokens" && once(&seen, 1):
			return count(v, &u.InputTokens)
		case key == "output_tokens" && once(&seen, 2):
			return count(v, &u.OutputTokens)
		case key == "cache_creation_input_tokens" && once(&seen, 4):
			return count(v, &u.CacheCreationInputTokens)
		case key == "cache_read_input_tokens" && once(&seen, 8):
			return count(v, &u.CacheReadInputTokens)
		case key == "service_tier" && once(&seen, 16):
			return str(v, &u.ServiceTier)
		case key == "inference_geo" && once(&seen, 32):
			return str(v, &u.InferenceGeo)
		case key == "cache_creation" && once(&seen, 64):
			if u.CacheCreation == nil {
				u.CacheCreation = &model.CacheCreation{}
			}
			c := u.CacheCreation
			return counts(v, "ephemeral_5m_input_tokens", &c.Ephemeral5mInputTokens,
				"ephemeral_1h_input_tokens", &c.Ephemeral1hInputTokens)
		case key == "server_tool_use" && once(&seen, 128):
			if u.ServerToolUse == nil {
				u.ServerToolUse = &model.ServerToolUse{}
			}
			t := u.ServerToolUse
			return counts(v, "web_search_requests", &t.WebSearchRequests,
				"web_fetch_requests", &t.WebFetchRequests)
		}
		return false
	})
}

// counts reads the compact object data of at most the two counts k1 and
// k2, each once, into the fields they name; the others are left as they
// are (merged, as encoding/json decodes into an existing struct).
func counts(data []byte, k1 string, d1 *int64, k2 string, d2 *int64) bool {
	var seen uint8
	return fields(data, func(kb, v []byte) bool {
		switch key := string(kb); {
		case key == k1 && once(&seen, 1):
			return count(v, d1)
		case key == k2 && once(&seen, 2):
			return count(v, d2)
		}
		return false
	})
}

// fields calls f with each key and value of the compact JSON object data:
// no white space, keys of lowercase letters, digits and underscores. It
// reports false when data is not such an object or f returns false. Values
// are delimited, not checked: f checks each value it accepts.
func fields(data []byte, f func(key, v []byte) bool) bool {
	if len(data) < 2 || data[0] != '{' {
		return false
	}
	i := 1
	if data[i] == '}' {
		return len(data) == 2
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		j := i + 1
		for j < len(data) && (data[j] >= 'a' && data[j] <= 'z' || data[j] >= '0' && data[j] <= '9' || data[j] == '_') {
			j++
		}
		if j == i+1 || j+1 >= len(data) || data[j] != '"' || data[j+1] != ':' {
			return false
		}
		key := data[i+1 : j]
		end, ok := jsonscan.ValueEnd(data, j+2)
		if !ok || end >= len(data) || !f(key, data[j+2:end]) {
			return false
		}
		switch data[end] {
		case ',':
			i = end + 1
		case '}':
			return end+1 == len(data)
		default:
			return false
		}
	}
}

// once reports whether bit is not yet in *seen, adding it: a key met twice
// is left to encoding/json.
func once(seen *uint8, bit uint8) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// ReadString reads v, a JSON string with no \u escape and nothing around
// it, as encoding/json would; ok is false for anything else (the caller
// then decodes v with encoding/json). It allocates only the string, and
// takes little stack: for callers deep in a turn's stack, where
// encoding/json's reflective decoder takes over a kilobyte.
func ReadString(v []byte) (s string, ok bool) {
	ok = str(v, &s)
	return s, ok
}

// str reads the JSON string v (no \u escapes) into *dst.
func str(v []byte, dst *string) bool {
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	s, rest, ok := readString(v[1:])
	if !ok || len(rest) != 0 {
		return false
	}
	*dst = s
	return true
}

// optStr reads v, a JSON string or null, into *dst (nil for null).
func optStr(v []byte, dst **string) bool {
	if string(v) == "null" {
		*dst = nil
		return true
	}
	var s string
	if !str(v, &s) {
		return false
	}
	*dst = &s
	return true
}

// count reads v, a non-negative integer of at most 18 digits without
// leading zeros, into *dst.
func count(v []byte, dst *int64) bool {
	if len(v) == 0 || len(v) > 18 || len(v) > 1 && v[0] == '0' {
		return false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int64(c-'0')
	}
	*dst = n
	return true
}
