package quickev

import (
	"encoding/json"
	"testing"
)

// FuzzReadString checks ReadString against encoding/json: whatever it
// reads, encoding/json reads the same.
func FuzzReadString(f *testing.F) {
	for _, s := range []string{`"a"`, `"a\"b\\c\/d\n\t"`, `""`, `"\u00e9"`, `"x" `, ` "x"`, `"é"`, "\"\xff\"", `"a\qb"`, `1`, `null`, `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		s, ok := ReadString(v)
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal(v, &want); err != nil {
			t.Fatalf("ReadString(%q) = %q, but encoding/json fails: %v", v, s, err)
		}
		if s != want {
			t.Fatalf("ReadString(%q) = %q, encoding/json %q", v, s, want)
		}
	})
}

func TestReadString(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
		ok   bool
	}{
		{`"a/b.go"`, "a/b.go", true},
		{`"tab\there"`, "tab\there", true},
		{`"\u00e9"`, "", false}, // left to encoding/json
		{`"x" `, "", false},
		{`12`, "", false},
		{`null`, "", false},
	} {
		got, ok := ReadString([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("ReadString(%s) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
