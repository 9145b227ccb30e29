package anthropic

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The extra header is made again whenever the betas or the key change,
// and reused while they stay the same.
func TestExtraMemo(t *testing.T) {
	var m extraMemo
	steps := []struct {
		betas []string
		key   string
		want  http.Header
		fresh bool
	}{
		{nil, "", nil, true},
		{[]string{"a", "b"}, "", http.Header{"Anthropic-Beta": {"a,b"}}, true},
		{[]string{"a", "b"}, "", http.Header{"Anthropic-Beta": {"a,b"}}, false},
		{[]string{"a"}, "", http.Header{"Anthropic-Beta": {"a"}}, true},
		{[]string{"a"}, "k1", http.Header{"Anthropic-Beta": {"a"}, "X-Api-Key": {"k1"}}, true},
		{[]string{"a"}, "k2", http.Header{"Anthropic-Beta": {"a"}, "X-Api-Key": {"k2"}}, true},
		{[]string{"a"}, "k2", http.Header{"Anthropic-Beta": {"a"}, "X-Api-Key": {"k2"}}, false},
		{nil, "", nil, true},
	}
	var prev http.Header
	for i, s := range steps {
		betas := append([]string(nil), s.betas...) // the caller may reuse its slice
		got := m.header(betas, s.key)
		if d := cmp.Diff(s.want, got); d != "" {
			t.Errorf("step %d: header (-want +got):\n%s", i, d)
		}
		if got != nil && prev != nil {
			same := &got["Anthropic-Beta"][0] == &prev["Anthropic-Beta"][0]
			if same == s.fresh {
				t.Errorf("step %d: reused the last header = %v, want %v", i, same, !s.fresh)
			}
		}
		for j := range betas {
			betas[j] = "changed"
		}
		prev = got
	}
}
