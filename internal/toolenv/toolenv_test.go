package toolenv

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuild(t *testing.T) {
	base := []string{"PATH=/bin", "ANTHROPIC_API_KEY=sk-secret", "ANTHROPIC_AUTH_TOKEN=tok", "HOME=/h", "BROKEN", "A=1=2"}
	cases := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"scrubbed", Config{Base: base},
			[]string{"A=1=2", "HOME=/h", "PATH=/bin"}},
		{"kept", Config{Base: base, KeepCredentials: true},
			[]string{"A=1=2", "ANTHROPIC_API_KEY=sk-secret", "ANTHROPIC_AUTH_TOKEN=tok", "HOME=/h", "PATH=/bin"}},
		{"layers", Config{Base: base, Settings: map[string]string{"HOME": "/s", "X": "s", "ANTHROPIC_API_KEY": "from-settings"},
			Extra: map[string]string{"X": "extra"}},
			[]string{"A=1=2", "HOME=/s", "PATH=/bin", "X=extra"}},
		{"empty", Config{}, []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Build(tc.cfg)); diff != "" {
				t.Errorf("Build (-want +got):\n%s", diff)
			}
		})
	}
}
