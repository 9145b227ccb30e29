package main

import "testing"

// TestExcludeDynamicFlag: --exclude-dynamic-system-prompt-sections sets
// Options.ExcludeDynamicSystemPrompt, and only when given.
func TestExcludeDynamicFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"-p", "hi"}, false},
		{[]string{"-p", "hi", "--exclude-dynamic-system-prompt-sections"}, true},
	} {
		c, err := parseArgs(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		o, err := c.options()
		if err != nil {
			t.Fatal(err)
		}
		if o.ExcludeDynamicSystemPrompt != tc.want {
			t.Errorf("%q: ExcludeDynamicSystemPrompt = %v", tc.args, o.ExcludeDynamicSystemPrompt)
		}
	}
}
