package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentloop/agentloop/settings"
)

// hookFields returns the fields a settings hook type knows, ok false for
// a type it does not know; "type", "timeout", "if" and "statusMessage" are
// common to all of them.
func hookFields(typ string) (fields []string, ok bool) {
	switch typ {
	case "command":
		return []string{"command", "args", "shell", "onFailure", "once", "async", "asyncRewake"}, true
	case "prompt":
		return []string{"prompt", "model", "continueOnBlock"}, true
	case "http":
		return []string{"url", "headers", "allowedEnvVars", "onFailure"}, true
	}
	return nil, false
}

var commonFields = []string{"type", "timeout", "if", "statusMessage"}

// settingsHook turns a settings hook entry of ev into a hook, or says why
// it cannot run (the decisions are listed on New).
func (d *Dispatcher) settingsHook(ev Event, e settings.Hook) (*hook, []string) {
	var warns []string
	known, ok := hookFields(e.Type)
	if !ok {
		return nil, []string{fmt.Sprintf("%s hooks are not supported; skipped", e.Type)}
	}
	subject := e.Command
	switch e.Type {
	case "http":
		subject = e.URL
	case "prompt":
		subject = e.Prompt
	}
	what := fmt.Sprintf("%s hook %q", e.Type, clip(subject, 80))
	for _, f := range e.Fields {
		if !slices.Contains(known, f) && !slices.Contains(commonFields, f) {
			warns = append(warns, fmt.Sprintf("%s: field %q is not known for %s hooks; ignored", what, f, e.Type))
		}
	}
	skip := func(why string) (*hook, []string) {
		return nil, append(warns, fmt.Sprintf("%s: %s; the hook is skipped", what, why))
	}
	switch {
	case e.If != "" && !toolEvent(ev):
		return skip(fmt.Sprintf("if condition %q cannot be evaluated for %s, which is not a tool event", e.If, ev))
	case len(e.Args) > 0:
		return skip("field \"args\" is not supported")
	case e.Shell != "" && e.Shell != "bash":
		return skip(fmt.Sprintf("shell %q is not supported (only bash)", e.Shell))
	case e.Type == "prompt" && d.cfg.Prompt == nil:
		return skip("no model to ask (Config.Prompt is not set)")
	case e.Type == "http" && !d.policy.urlAllowed(e.URL):
		return skip("its url matches no pattern of the managed setting allowedHttpHookUrls")
	}
	if e.AsyncRewake {
		warns = append(warns, what+": field \"asyncRewake\" is not supported; the hook runs without waking the model")
	}
	if e.ContinueOnBlock {
		warns = append(warns, what+": field \"continueOnBlock\" is not supported; ignored")
	}
	envVars := d.policy.allowedVars(e.AllowedEnvVars)
	for _, name := range slices.Sorted(maps.Keys(e.Headers)) {
		for _, ref := range envRefs(e.Headers[name]) {
			switch {
			case !slices.Contains(e.AllowedEnvVars, ref):
				warns = append(warns, fmt.Sprintf("%s: header %s names $%s, which is not in allowedEnvVars; it expands to nothing", what, name, ref))
			case !slices.Contains(envVars, ref):
				warns = append(warns, fmt.Sprintf("%s: header %s names $%s, which the managed setting httpHookAllowedEnvVars does not list; it expands to nothing", what, name, ref))
			}
		}
	}
	var cond *condition
	if e.If != "" {
		var cw []string
		cond, cw = newCondition(e.If)
		for _, w := range cw {
			warns = append(warns, what+": "+w)
		}
	}
	h := &hook{kind: e.Type, command: e.Command, entry: e, cond: cond, envVars: envVars,
		timeout:  time.Duration(e.Timeout * float64(time.Second)),
		async:    e.Async && e.Type == "command",
		failStop: e.OnFailure == "block" && e.Type != "prompt",
	}
	if e.Once && e.Type == "command" {
		h.once = new(atomic.Bool)
	}
	return h, warns
}

// envRefs lists the variables a header value names ($VAR or ${VAR}).
func envRefs(v string) []string {
	var refs []string
	os.Expand(v, func(name string) string {
		refs = append(refs, name)
		return ""
	})
	return refs
}

// getenv looks name up in the hooks' environment (Config.Env, or the
// process's when that is nil); the last entry wins, as for exec.
func (d *Dispatcher) getenv(name string) string {
	if d.cfg.Env == nil {
		return os.Getenv(name)
	}
	val := ""
	for _, kv := range d.cfg.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			val = v
		}
	}
	return val
}

// runAsync starts an async hook in the background, under its own timeout
// but not the dispatch's cancellation. Its output has no effect; a
// failure is sent to Config.Report.
func (d *Dispatcher) runAsync(ctx context.Context, h *hook, in Input) {
	ev := in.EventName()
	name := string(ev)
	if t := in.target(); matchable(ev) && t != "" {
		name += ":" + t
	}
	stdin, merr := json.Marshal(in)
	go func() {
		r := &run{h: h, ev: ev, name: name}
		d.execute(context.WithoutCancel(ctx), r, in, stdin, merr)
		var msgs []string
		switch {
		case r.failure != "":
			msgs = append(msgs, r.failure)
		case r.timedOut:
			msgs = append(msgs, r.lateText())
		case r.blocked:
			msgs = append(msgs, r.blockText()+" (async hooks cannot block)")
		}
		for _, m := range msgs {
			d.report(name + " hook error: " + m)
		}
	}()
}
