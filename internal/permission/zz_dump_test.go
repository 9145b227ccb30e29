package permission

import (
	"context"
	"testing"
)

func TestDumpTable(t *testing.T) {
	for _, f := range []string{"adversarial.json"} {
		for _, c := range loadTable(t, f) {
			e := newTableEnv(t)
			e.setup(t, c.Setup)
			d := e.checker(t, c).Decide(context.Background(), Call{Tool: c.Tool, Input: e.input(t, c.Input)})
			msg := d.Message
			if len(msg) > 150 {
				msg = msg[:150]
			}
			t.Logf("%-45.45s %s/%s %s | %s", c.Name, d.Behavior, d.ReasonType, d.Rule, msg)
		}
	}
}
