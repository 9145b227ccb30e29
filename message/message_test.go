package message

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDecodeReferenceLines reads every line the reference CLI printed in the
// conformance recordings (when the kit is beside the project) and checks
// that each decodes into the right type and that the fields we model
// survive a round trip.
func TestDecodeReferenceLines(t *testing.T) {
	files, _ := filepath.Glob("../../shared/conformance/scenarios/*/out/stdout.jsonl")
	files = append(files, "testdata/lines.jsonl")
	n := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line := sc.Bytes()
			m, err := Decode(line)
			if err != nil {
				t.Fatalf("%s: %v\n%s", f, err, line)
			}
			var head struct {
				Type    string `json:"type"`
				Subtype string `json:"subtype"`
			}
			_ = json.Unmarshal(line, &head)
			if m.Kind() != head.Type {
				t.Errorf("%s: kind %q, line type %q", f, m.Kind(), head.Type)
			}
			again, err := json.Marshal(m)
			if err != nil {
				t.Fatalf("%s: re-encode: %v", f, err)
			}
			m2, err := Decode(again)
			if err != nil {
				t.Fatalf("%s: decode re-encoded: %v\n%s", f, err, again)
			}
			if diff := cmp.Diff(m, m2); diff != "" {
				t.Errorf("%s: round trip changed the message (-first +second):\n%s", f, diff)
			}
			n++
		}
		fh.Close()
	}
	if n == 0 {
		t.Fatal("no lines read")
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, bad := range []string{``, `{`, `{"subtype":"init"}`, `[1,2]`, `{"type":"assistant","message":{"content":[{"text":"no type"}]}}`} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%q) succeeded", bad)
		}
	}
	m, err := Decode([]byte(`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if u, ok := m.(*Unknown); !ok || u.Kind() != "rate_limit_event" {
		t.Errorf("unknown type decoded as %T", m)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"type":"result","subtype":"success","is_error":false,"result":"hi"}`))
	f.Add([]byte(`{"type":"system","subtype":"api_retry","attempt":1,"error_status":null}`))
	f.Add([]byte(`{"type":"user","message":{"role":"user","content":"text"}}`))
	f.Add([]byte(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"}]}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		if _, err := json.Marshal(m); err != nil {
			t.Errorf("decoded message does not encode: %v", err)
		}
	})
}
