package acp

import (
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"
)

func TestEnvChanges(t *testing.T) {
	for _, tc := range []struct {
		name      string
		env, base []string
		want      []sdk.EnvVariable
	}{
		{"same", []string{"A=1", "B=2"}, []string{"A=1", "B=2"}, []sdk.EnvVariable{}},
		{"changed and new", []string{"A=1", "B=3", "C=4"}, []string{"A=1", "B=2"},
			[]sdk.EnvVariable{{Name: "B", Value: "3"}, {Name: "C", Value: "4"}}},
		{"the last value counts", []string{"PAGER=less", "A=1", "PAGER=cat"}, []string{"PAGER=less", "A=1"},
			[]sdk.EnvVariable{{Name: "PAGER", Value: "cat"}}},
		{"withheld is emptied", []string{"A=1"}, []string{"A=1", "ANTHROPIC_API_KEY=sk"},
			[]sdk.EnvVariable{{Name: "ANTHROPIC_API_KEY", Value: ""}}},
		{"malformed entries are skipped", []string{"junk", "A=1"}, []string{"alsojunk", "A=1"}, []sdk.EnvVariable{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, envChanges(tc.env, tc.base)); d != "" {
				t.Errorf("envChanges (-want +got):\n%s", d)
			}
		})
	}
}
