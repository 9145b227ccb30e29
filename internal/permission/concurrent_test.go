package permission

import "testing"

func TestBashReadOnly(t *testing.T) {
	for cmd, want := range map[string]bool{
		"sleep 5; echo done":         true,
		"sleep 1 && echo a | tr a b": true,
		"cat go.mod":                 true,
		"echo hi > /dev/null":        true,
		"echo hi > out.txt":          false,
		"rm -rf x":                   false,
		"touch started; sleep 30":    false,
		"cd /tmp && ls":              false,
		"X=1":                        false,
		"eval \"$(cat f)\"":          false,
		"sleep 5 &":                  true,
		"":                           false,
		"git status":                 true,
		"git commit -m x":            false,
		"sed -i s/a/b/ f":            false,
	} {
		if got := BashReadOnly(cmd, "/home/user/project"); got != want {
			t.Errorf("BashReadOnly(%q) = %v, want %v", cmd, got, want)
		}
	}
}
