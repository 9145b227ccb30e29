package permission

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

func TestZZProbe(t *testing.T) {
	f, err := os.Open("/tmp/h3/probe.txt")
	if err != nil {
		t.Skip()
	}
	dir := t.TempDir()
	rs := RuleSet{Sources: []SourceRules{{Source: SourceCLI, Allow: []string{"Bash(echo:*)"}, Deny: []string{"Bash(touch:*)"}}}}
	c, _ := New(Config{Rules: rs, Dirs: []string{dir}, Home: dir})
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var cmd string
		if err := json.Unmarshal(sc.Bytes(), &cmd); err != nil {
			continue
		}
		in, _ := json.Marshal(map[string]string{"command": cmd})
		d := c.Decide(context.Background(), Call{Tool: "Bash", Input: in})
		fmt.Printf("%-6s %q  -- %s\n", d.Behavior, cmd, d.Message)
	}
}
