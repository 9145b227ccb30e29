package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
)

// compatProxy serves on a loopback port of its own and forwards every
// request to target, first making a JSON body one agentlooptest accepts:
// it removes the top-level context_management field (the reference CLI
// sends "keep": "all", which model.ContextAmount cannot decode) and the
// messages with role "system" (which the reference CLI 2.1.197 sends in
// the history and agentlooptest rejects). The scripted replies depend on
// neither.
func compatProxy(target string) (addr string, err error) {
	u, err := url.Parse(target)
	if err != nil {
		return "", fmt.Errorf("proxy target: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("proxy: %w", err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // stream events as they come
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = compat(body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			r.Header.Set("Content-Length", strconv.Itoa(len(body)))
		}
		rp.ServeHTTP(w, r)
	})
	go http.Serve(ln, h)
	return "http://" + ln.Addr().String(), nil
}

// compat returns body without its top-level context_management field and
// without the messages whose role is "system", when body is a JSON object
// that has either, and body unchanged otherwise.
func compat(body []byte) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return body
	}
	_, changed := obj["context_management"]
	delete(obj, "context_management")
	var msgs []json.RawMessage
	if json.Unmarshal(obj["messages"], &msgs) == nil {
		kept := msgs[:0]
		for _, m := range msgs {
			var role struct {
				Role string `json:"role"`
			}
			if json.Unmarshal(m, &role) == nil && role.Role == "system" {
				changed = true
				continue
			}
			kept = append(kept, m)
		}
		if changed {
			b, err := json.Marshal(kept)
			if err != nil {
				return body
			}
			obj["messages"] = b
		}
	}
	if !changed {
		return body
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return body
	}
	return out
}
