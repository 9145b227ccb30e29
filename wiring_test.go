package agentloop

import (
	"context"
	"reflect"
	"testing"

	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/observe"
	sessions "github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/tool"
)

// TestWiringCarriesEveryOption sets each field of Options alone and checks
// that the session's Config has it: a field added to Options and
// forgotten in config (or missing from Config) fails here.
func TestWiringCarriesEveryOption(t *testing.T) {
	ot := reflect.TypeFor[Options]()
	ct := reflect.TypeFor[conversation.Config]()
	if ot.NumField() != ct.NumField() {
		t.Errorf("Options has %d fields, conversation.Config %d", ot.NumField(), ct.NumField())
	}
	for i := range ot.NumField() {
		f := ot.Field(i)
		t.Run(f.Name, func(t *testing.T) {
			if cf, ok := ct.FieldByName(f.Name); !ok || cf.Index[0] != i {
				t.Fatalf("conversation.Config has no field %s at position %d", f.Name, i)
			}
			var o Options
			setNonZero(t, reflect.ValueOf(&o).Elem().Field(i))
			got := reflect.ValueOf(o.config()).Elem().FieldByName(f.Name)
			if got.IsZero() {
				t.Errorf("Options.%s set, Config.%s is zero: config does not carry it", f.Name, f.Name)
			}
		})
	}
}

// TestWiringStepsDisjoint runs each wiring step alone on fully set
// Options and checks that no field of Config is set by two steps: a step
// that overwrote another's field would make the order of the list matter.
func TestWiringStepsDisjoint(t *testing.T) {
	var o Options
	ov := reflect.ValueOf(&o).Elem()
	for i := range ov.NumField() {
		setNonZero(t, ov.Field(i))
	}
	owner := map[string]string{}
	for _, step := range wiring {
		var c conversation.Config
		step.wire(&o, &c)
		cv := reflect.ValueOf(c)
		for i := range cv.NumField() {
			if cv.Field(i).IsZero() {
				continue
			}
			name := cv.Type().Field(i).Name
			if prev, ok := owner[name]; ok {
				t.Errorf("Config.%s is set by steps %q and %q", name, prev, step.name)
			}
			owner[name] = step.name
		}
	}
	if len(owner) != ov.NumField() {
		t.Errorf("the steps set %d of Config's %d fields", len(owner), ov.NumField())
	}
}

// setNonZero gives v a value other than its zero value.
func setNonZero(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Float64:
		v.SetFloat(1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem())
		v.Set(m)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Func:
		v.Set(reflect.MakeFunc(v.Type(), func(args []reflect.Value) []reflect.Value {
			out := make([]reflect.Value, v.Type().NumOut())
			for i := range out {
				out[i] = reflect.New(v.Type().Out(i)).Elem()
			}
			return out
		}))
	case reflect.Interface:
		for _, x := range []any{stubConnector{}, stubProvider{}, stubStore{}, stubObserver{}} {
			if reflect.TypeOf(x).Implements(v.Type()) {
				v.Set(reflect.ValueOf(x))
				return
			}
		}
		t.Fatalf("no value at hand for interface %s: add a stub", v.Type())
	default:
		t.Fatalf("no non-zero value for kind %s", v.Kind())
	}
}

// Stubs that implement the interfaces of Options (their methods are never
// called).
type (
	stubConnector struct{ tool.MCPConnector }
	stubProvider  struct{ model.Provider }
	stubStore     struct{ sessions.Store }
	stubObserver  struct{ observe.Observer }
)

// TestWiringCanUseTool checks that the host's callback sees the session's
// request and its answer reaches the session unchanged.
func TestWiringCanUseTool(t *testing.T) {
	var seen PermissionRequest
	f := canUseTool(func(_ context.Context, req PermissionRequest) (PermissionResult, error) {
		seen = req
		return Deny("no"), nil
	})
	res, err := f(context.Background(), conversation.PermissionRequest{ToolName: "Bash", BlockedPath: "/etc", AgentID: "a1"})
	if err != nil || res.Behavior != "deny" || res.Message != "no" {
		t.Errorf("answer = %+v, %v; want deny \"no\"", res, err)
	}
	if seen.ToolName != "Bash" || seen.BlockedPath != "/etc" || seen.AgentID != "a1" {
		t.Errorf("request = %+v", seen)
	}
	if canUseTool(nil) != nil {
		t.Error("a nil callback became non-nil")
	}
}

// TestWiringSandbox checks the nested sandbox settings reach the session.
func TestWiringSandbox(t *testing.T) {
	yes := true
	s := &SandboxSettings{Enabled: true, FailIfUnavailable: &yes, ExcludedCommands: []string{"git"},
		Filesystem: &SandboxFilesystem{AllowWrite: []string{"/w"}, DenyRead: []string{"/r"}},
		Network:    &SandboxNetwork{AllowedDomains: []string{"example.com"}, AllowLocalBinding: true}}
	c := s.config()
	if !c.Enabled || c.FailIfUnavailable != &yes || c.ExcludedCommands[0] != "git" ||
		c.Filesystem.AllowWrite[0] != "/w" || c.Filesystem.DenyRead[0] != "/r" ||
		c.Network.AllowedDomains[0] != "example.com" || !c.Network.AllowLocalBinding {
		t.Errorf("sandbox config = %+v", c)
	}
}
