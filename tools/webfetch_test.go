package tools

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// webUpdate rewrites the golden files of the web, notebook, task and
// AskUserQuestion tests: go test ./tools/ -run 'WebFetch|Notebook' -web-update
var webUpdate = flag.Bool("web-update", false, "rewrite the golden files under testdata/{webfetch,websearch,notebook,tasks,askuser}")

// sideRun runs tl as the loop does: the input is validated against the
// tool's schema (defaults applied) before Run, and a Go error from Run
// becomes an is_error result.
func sideRun(t testing.TB, ctx context.Context, tl tool.Tool, env *tool.Env, input any) tool.Result {
	t.Helper()
	raw, ok := input.(string)
	if !ok {
		b, err := json.Marshal(input)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	info := tl.Info()
	if err := tool.Check(tl); err != nil {
		t.Fatalf("%s: %v", info.Name, err)
	}
	schema, err := tool.CompileSchema(info.InputSchema)
	if err != nil {
		t.Fatalf("%s schema: %v", info.Name, err)
	}
	valid, err := schema.Validate(info.Name, json.RawMessage(raw))
	if err != nil {
		return tool.Error(err.Error())
	}
	r, err := tl.Run(ctx, &tool.Call{ID: "toolu_test", Input: valid, Env: env})
	if err != nil {
		return tool.Error(err.Error())
	}
	return r
}

// sideOutcome is what a test compares of a result.
type sideOutcome struct {
	Text       string
	IsError    bool
	Structured any
}

func sideOutcomeOf(r tool.Result) sideOutcome {
	return sideOutcome{Text: r.Text(), IsError: r.IsError, Structured: r.Structured}
}

// sideProvider is an Anthropic provider talking to the fake API s.
func sideProvider(t testing.TB, s *agentlooptest.Server) model.Provider {
	t.Helper()
	retries := 0
	p, err := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: s.URL, MaxRetries: &retries})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sideReduce drops descriptions and $schema from a JSON schema, as the
// reference's tool_schemas.json does.
func sideReduce(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if _, isText := x.(string); isText && (k == "description" || k == "$schema") {
				continue // keywords, not properties of those names
			}
			out[k] = sideReduce(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = sideReduce(x)
		}
		return out
	}
	return v
}

// sideCheckSchemas compares the tools' input schemas, reduced, with the
// reference schemas in file (a JSON object: tool name → input_schema).
func sideCheckSchemas(t *testing.T, file string, tools ...tool.Tool) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		info := tl.Info()
		var got any
		if err := json.Unmarshal(info.InputSchema, &got); err != nil {
			t.Fatalf("%s: %v", info.Name, err)
		}
		if diff := cmp.Diff(want[info.Name], sideReduce(got)); diff != "" {
			t.Errorf("%s schema (-reference +ours):\n%s", info.Name, diff)
		}
		if err := tool.Check(tl); err != nil {
			t.Errorf("%s: %v", info.Name, err)
		}
		if strings.TrimSpace(info.Description) == "" {
			t.Errorf("%s has no description", info.Name)
		}
	}
}

// sideGolden compares got with testdata/<rel>, or rewrites it with
// -web-update.
func sideGolden(t *testing.T, rel string, got []byte) {
	t.Helper()
	file := filepath.Join("testdata", filepath.FromSlash(rel))
	if *webUpdate {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -web-update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", file, diff)
	}
}

func TestWebFetchInfo(t *testing.T) {
	sideCheckSchemas(t, "testdata/webfetch/schema.json", WebFetch())
	if !WebFetch().Info().ReadOnly {
		t.Error("WebFetch is not read-only")
	}
}

const webFetchPageHTML = `<!DOCTYPE html>
<html><head><title>Gophers</title><script>var x = 1;</script></head>
<body>
<h1>All about gophers</h1>
<p>Gophers are <strong>small</strong> burrowing rodents. See <a href="/more">more</a>.</p>
<ul><li>Pocket gophers</li><li>Ground squirrels</li></ul>
</body></html>`

const webFetchPageMarkdown = "# All about gophers\n\nGophers are **small** burrowing rodents. See [more](%s/more).\n\n- Pocket gophers\n- Ground squirrels"

const webFetchNoModelNote = "\n\n[No model is available in this session to apply the prompt, so this is the page's text itself.]"

// webFetchSite serves the pages the WebFetch tests fetch.
func webFetchSite(t *testing.T, other string) (*httptest.Server, *atomic.Int32) {
	hits := &atomic.Int32{}
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, webFetchPageHTML)
	})
	mux.HandleFunc("/cached", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "cache me")
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "abcdefghijklmnopqrstuvwxyz")
	})
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html></html>")
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"a": "<b>"}`)
	})
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/page", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other+"/page", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/hop-away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/away", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/nowhere", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusFound)
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not here", http.StatusNotFound)
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("x", 3000))
	})
	mux.HandleFunc("/huge-chunked", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for range 3 {
			fmt.Fprint(w, strings.Repeat("y", 1000))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/image", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	})
	mux.HandleFunc("/sniffed", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no type at all: sniffed
		w.Write([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00"))
	})
	mux.HandleFunc("/fake-text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("abc\x00def"))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	mux.HandleFunc("/ua", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, r.Header.Get("User-Agent"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, hits
}

func TestWebFetchResults(t *testing.T) {
	other, _ := webFetchSite(t, "")
	srv, _ := webFetchSite(t, other.URL)
	base := srv.URL
	tl := WebFetchWith(&WebFetchOptions{MaxBytes: 2048, MaxChars: 10, MaxRedirects: 3})
	quick := WebFetchWith(&WebFetchOptions{Timeout: 100 * time.Millisecond})
	wide := WebFetchWith(&WebFetchOptions{MaxRedirects: 3})
	env := &tool.Env{State: &tool.State{}}
	ok := func(url, result string, bytes int) WebFetchResult {
		return WebFetchResult{Bytes: bytes, Code: 200, CodeText: "OK", Result: result, URL: url}
	}
	page := fmt.Sprintf(webFetchPageMarkdown, base) + webFetchNoModelNote
	movedText := func(from, via string) string {
		s := fmt.Sprintf("The page was not fetched: %s redirects to a different host (HTTP 301 Moved Permanently), and WebFetch does not follow redirects across hosts.\n\n", from)
		if via != "" {
			s += "Redirecting URL: " + via + "\n"
		}
		return s + fmt.Sprintf("New location: %s/page\n\nIf you still want the page, call WebFetch again with url %q and the same prompt:\nSummarise", other.URL, other.URL+"/page")
	}
	tests := []struct {
		name string
		tl   tool.Tool
		in   map[string]any
		want sideOutcome
	}{
		{"html", wide, map[string]any{"url": base + "/page", "prompt": "Summarise"},
			sideOutcome{Text: page, Structured: ok(base+"/page", page, len(webFetchPageHTML))}},
		{"same host redirect", wide, map[string]any{"url": base + "/old#frag", "prompt": "Summarise"},
			sideOutcome{Text: page, Structured: ok(base+"/old#frag", page, len(webFetchPageHTML))}},
		{"json as is", wide, map[string]any{"url": base + "/json", "prompt": "Summarise"},
			sideOutcome{Text: `{"a": "<b>"}` + webFetchNoModelNote, Structured: ok(base+"/json", `{"a": "<b>"}`+webFetchNoModelNote, 12)}},
		{"user agent", wide, map[string]any{"url": base + "/ua", "prompt": "Summarise"},
			sideOutcome{Text: WebFetchDefaultUserAgent + webFetchNoModelNote, Structured: ok(base+"/ua", WebFetchDefaultUserAgent+webFetchNoModelNote, len(WebFetchDefaultUserAgent))}},
		{"other host redirect", wide, map[string]any{"url": base + "/away", "prompt": "Summarise"},
			sideOutcome{Text: movedText(base+"/away", ""), Structured: WebFetchResult{
				Bytes: len(movedText(base+"/away", "")), Code: 301, CodeText: "Moved Permanently",
				Result: movedText(base+"/away", ""), URL: base + "/away"}}},
		{"other host after a same host redirect", wide, map[string]any{"url": base + "/hop-away", "prompt": "Summarise"},
			sideOutcome{Text: movedText(base+"/hop-away", base+"/away"), Structured: WebFetchResult{
				Bytes: len(movedText(base+"/hop-away", base+"/away")), Code: 301, CodeText: "Moved Permanently",
				Result: movedText(base+"/hop-away", base+"/away"), URL: base + "/hop-away"}}},
		{"first part", tl, map[string]any{"url": base + "/text", "prompt": "Summarise"},
			sideOutcome{
				Text:       "abcdefghij" + webFetchNoModelNote + "\n\n[This covered characters 0 to 10 of the page's 26. For the rest, call WebFetch again with the same url and offset 10.]",
				Structured: ok(base+"/text", "abcdefghij"+webFetchNoModelNote+"\n\n[This covered characters 0 to 10 of the page's 26. For the rest, call WebFetch again with the same url and offset 10.]", 26)}},
		{"middle part", tl, map[string]any{"url": base + "/text", "prompt": "Summarise", "offset": 10},
			sideOutcome{
				Text:       "klmnopqrst" + webFetchNoModelNote + "\n\n[This covered characters 10 to 20 of the page's 26. For the rest, call WebFetch again with the same url and offset 20.]",
				Structured: ok(base+"/text", "klmnopqrst"+webFetchNoModelNote+"\n\n[This covered characters 10 to 20 of the page's 26. For the rest, call WebFetch again with the same url and offset 20.]", 26)}},
		{"last part", tl, map[string]any{"url": base + "/text", "prompt": "Summarise", "offset": 20},
			sideOutcome{Text: "uvwxyz" + webFetchNoModelNote, Structured: ok(base+"/text", "uvwxyz"+webFetchNoModelNote, 26)}},

		// Errors.
		{"offset past the end", tl, map[string]any{"url": base + "/text", "prompt": "p", "offset": 26},
			sideOutcome{Text: "offset 26 is past the end of the page, which has 26 characters.", IsError: true}},
		{"negative offset", tl, map[string]any{"url": base + "/text", "prompt": "p", "offset": -1},
			sideOutcome{Text: "offset must be 0 or more.", IsError: true}},
		{"404", tl, map[string]any{"url": base + "/missing", "prompt": "p"},
			sideOutcome{Text: "Fetching " + base + "/missing failed: the server answered 404 Not Found.", IsError: true}},
		{"redirect without location", tl, map[string]any{"url": base + "/nowhere", "prompt": "p"},
			sideOutcome{Text: "Fetching " + base + "/nowhere failed: the server answered 302 Found without saying where to.", IsError: true}},
		{"redirect loop", tl, map[string]any{"url": base + "/loop", "prompt": "p"},
			sideOutcome{Text: "Fetching " + base + "/loop failed: more than 3 redirects.", IsError: true}},
		{"huge", tl, map[string]any{"url": base + "/huge", "prompt": "p"},
			sideOutcome{Text: "Fetching " + base + "/huge failed: the page is larger than 2 KB, the most WebFetch reads.", IsError: true}},
		{"huge chunked", tl, map[string]any{"url": base + "/huge-chunked", "prompt": "p"},
			sideOutcome{Text: "Fetching " + base + "/huge-chunked failed: the page is larger than 2 KB, the most WebFetch reads.", IsError: true}},
		{"binary", tl, map[string]any{"url": base + "/image", "prompt": "p"},
			sideOutcome{Text: "Fetching " + base + "/image failed: its content is image/png, not text; WebFetch reads only web pages and other text.", IsError: true}},
		{"binary sniffed", tl, map[string]any{"url": base + "/sniffed", "prompt": "p"},
			sideOutcome{Text: "Fetching " + base + "/sniffed failed: its content is image/gif, not text; WebFetch reads only web pages and other text.", IsError: true}},
		{"binary said to be text", tl, map[string]any{"url": base + "/fake-text", "prompt": "p"},
			sideOutcome{Text: "Fetching " + base + "/fake-text failed: it is said to be text/plain but holds binary data.", IsError: true}},
		{"timeout", quick, map[string]any{"url": base + "/slow", "prompt": "p"},
			sideOutcome{Text: "Fetching " + base + "/slow timed out after 100ms.", IsError: true}},
		{"empty page", tl, map[string]any{"url": base + "/empty", "prompt": "p"},
			sideOutcome{Text: "The page " + base + "/empty has no text content.", Structured: ok(base+"/empty", "The page "+base+"/empty has no text content.", 13)}},
		{"not http", tl, map[string]any{"url": "ftp://example.com/f", "prompt": "p"},
			sideOutcome{Text: `Invalid URL "ftp://example.com/f": only http and https URLs can be fetched.`, IsError: true}},
		{"relative", tl, map[string]any{"url": "/page", "prompt": "p"},
			sideOutcome{Text: `Invalid URL "/page": only http and https URLs can be fetched.`, IsError: true}},
		{"no host", tl, map[string]any{"url": "https:///x", "prompt": "p"},
			sideOutcome{Text: `Invalid URL "https:///x": it has no host.`, IsError: true}},
		{"credentials", tl, map[string]any{"url": "https://me:pw@example.com/", "prompt": "p"},
			sideOutcome{Text: `Invalid URL "https://me:pw@example.com/": URLs with a user name or password are not fetched.`, IsError: true}},
		{"unparsable", tl, map[string]any{"url": "http://[::1", "prompt": "p"},
			sideOutcome{Text: `Invalid URL "http://[::1": missing ']' in host`, IsError: true}},
		{"too long", tl, map[string]any{"url": "https://example.com/" + strings.Repeat("a", 2000), "prompt": "p"},
			sideOutcome{Text: "Invalid URL: it is 2020 characters long; WebFetch accepts at most 2000.", IsError: true}},
		{"missing prompt", tl, map[string]any{"url": base + "/page"},
			sideOutcome{Text: "InputValidationError: WebFetch failed due to the following issue:\nThe required parameter `prompt` is missing", IsError: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := sideOutcomeOf(sideRun(t, context.Background(), tc.tl, env, tc.in))
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(WebFetchResult{}, "DurationMs")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestWebFetchModel(t *testing.T) {
	srv, _ := webFetchSite(t, "")
	api := agentlooptest.NewTB(t, agentlooptest.Text("Gophers are small burrowing rodents."))
	env := &tool.Env{Provider: sideProvider(t, api), Model: "claude-opus-5-5", State: &tool.State{}}
	url := srv.URL + "/page?model"
	got := sideOutcomeOf(sideRun(t, context.Background(), WebFetch(), env, map[string]any{"url": url, "prompt": "What are gophers?"}))
	want := sideOutcome{Text: "Gophers are small burrowing rodents.", Structured: WebFetchResult{
		Bytes: len(webFetchPageHTML), Code: 200, CodeText: "OK", Result: "Gophers are small burrowing rodents.", URL: url}}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(WebFetchResult{}, "DurationMs")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if api.Len() != 1 {
		t.Fatalf("%d model requests, want 1", api.Len())
	}
	req := api.LastRequest()
	if req.Params.Model != "claude-haiku-5-5" {
		t.Errorf("model %q, want claude-haiku-5-5", req.Params.Model)
	}
	if len(req.Params.Tools) != 0 {
		t.Errorf("tools declared: %v", req.ToolNames())
	}
	wantPrompt := "Below is the text of the web page " + url + ", converted to Markdown.\n\n<page>\n" +
		fmt.Sprintf(webFetchPageMarkdown, srv.URL) + "\n</page>\n\nRequest about this page:\nWhat are gophers?\n\n" +
		"Answer the request from the page's text alone, concisely. If the page does not contain what is asked, say so rather than guess. " +
		"Quote only short passages, and never reproduce long stretches of the page word for word."
	if diff := cmp.Diff(wantPrompt, req.LastUserText()); diff != "" {
		t.Errorf("prompt (-want +got):\n%s", diff)
	}
}

func TestWebFetchModelPartAndConfiguredModel(t *testing.T) {
	srv, _ := webFetchSite(t, "")
	api := agentlooptest.NewTB(t, agentlooptest.Text("  letters  "))
	env := &tool.Env{Provider: sideProvider(t, api), State: &tool.State{}}
	tl := WebFetchWith(&WebFetchOptions{Model: "sonnet", MaxChars: 10})
	url := srv.URL + "/text?part"
	r := sideRun(t, context.Background(), tl, env, map[string]any{"url": url, "prompt": "Which letters?", "offset": 5})
	want := "letters\n\n[This covered characters 5 to 15 of the page's 26. For the rest, call WebFetch again with the same url and offset 15.]"
	if diff := cmp.Diff(sideOutcome{Text: want}, sideOutcome{Text: r.Text(), IsError: r.IsError}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	req := api.LastRequest()
	if req.Params.Model != "claude-sonnet-5-5" {
		t.Errorf("model %q, want claude-sonnet-5-5", req.Params.Model)
	}
	if p := req.LastUserText(); !strings.HasPrefix(p, "Below is the text of the web page "+url+", converted to Markdown (only part of it, starting at character 5 of 26).\n\n<page>\nfghijklmno\n</page>") {
		t.Errorf("prompt:\n%s", p)
	}
}

func TestWebFetchModelFailure(t *testing.T) {
	srv, _ := webFetchSite(t, "")
	api := agentlooptest.NewTB(t,
		agentlooptest.Error(400, "invalid_request_error", "bad request"),
		agentlooptest.Text("   "))
	env := &tool.Env{Provider: sideProvider(t, api), State: &tool.State{}}
	url := srv.URL + "/text?fail"
	for _, want := range []string{
		"Fetched " + url + ", but the model could not apply the prompt to it: API error 400 invalid_request_error: bad request",
		"Fetched " + url + ", but the model could not apply the prompt to it: the model's answer was empty",
	} {
		got := sideOutcomeOf(sideRun(t, context.Background(), WebFetch(), env, map[string]any{"url": url, "prompt": "p"}))
		if diff := cmp.Diff(sideOutcome{Text: want, IsError: true}, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
}

func TestWebFetchCache(t *testing.T) {
	srv, hits := webFetchSite(t, "")
	env := &tool.Env{State: &tool.State{}}
	url := srv.URL + "/cached"
	for i := range 3 {
		r := sideRun(t, context.Background(), WebFetch(), env, map[string]any{"url": url, "prompt": fmt.Sprint("question ", i)})
		if r.IsError || !strings.HasPrefix(r.Text(), "cache me") {
			t.Fatalf("call %d: %+v", i, r)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("the page was fetched %d times, want 1", n)
	}
	noCache := WebFetchWith(&WebFetchOptions{CacheTTL: -1})
	for range 2 {
		sideRun(t, context.Background(), noCache, env, map[string]any{"url": srv.URL + "/page?nocache", "prompt": "p"})
	}
	if n := hits.Load(); n != 3 {
		t.Errorf("with the cache off, %d fetches in all, want 3", n)
	}
}

func TestWebFetchCacheBounds(t *testing.T) {
	c := newWebFetchCache(4, 10)
	for i := range 6 {
		c.put(fmt.Sprint(i), &webFetchDoc{text: "x"}, time.Minute)
	}
	if len(c.entries) != 4 || len(c.order) != 4 || c.size != 4 {
		t.Errorf("%d entries, %d in order, size %d; want 4", len(c.entries), len(c.order), c.size)
	}
	if _, ok := c.get("1"); ok {
		t.Error("an old entry was kept")
	}
	if _, ok := c.get("5"); !ok {
		t.Error("the newest entry was dropped")
	}
	c.put("5", &webFetchDoc{text: "xx"}, time.Minute)
	if len(c.entries) != 4 || c.size != 5 {
		t.Errorf("replacing an entry: %d entries, size %d; want 4, 5", len(c.entries), c.size)
	}
	c.put("old", &webFetchDoc{text: "y"}, -time.Second)
	if _, ok := c.get("old"); ok {
		t.Error("an expired entry was returned")
	}
	c.put("big", &webFetchDoc{text: "123456789"}, time.Minute)
	if _, ok := c.get("big"); !ok || len(c.entries) != 1 || c.size != 9 {
		t.Errorf("after a big entry: %d entries, size %d; want only it", len(c.entries), c.size)
	}
	c.put("huge", &webFetchDoc{text: "12345678901"}, time.Minute)
	if _, ok := c.get("huge"); ok {
		t.Error("an entry over the size bound was kept")
	}
}

func TestWebFetchTarget(t *testing.T) {
	for in, want := range map[string]string{
		"http://example.com/a?b=c#d":   "https://example.com/a?b=c",
		"HTTP://example.com":           "https://example.com",
		"https://example.com/x":        "https://example.com/x",
		"http://localhost:8080/x":      "http://localhost:8080/x",
		"http://app.localhost/x":       "http://app.localhost/x",
		"http://127.0.0.1:9/x":         "http://127.0.0.1:9/x",
		"http://127.1.2.3/":            "http://127.1.2.3/",
		"http://[::1]:80/":             "http://[::1]:80/",
		"http://10.0.0.1/":             "https://10.0.0.1/",
		"http://localhost.example.com": "https://localhost.example.com",
	} {
		u, err := webFetchTarget(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if u.String() != want {
			t.Errorf("%s → %s, want %s", in, u, want)
		}
	}
}

func TestWebFetchCancelled(t *testing.T) {
	srv, _ := webFetchSite(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	tl := WebFetchWith(&WebFetchOptions{Timeout: 5 * time.Second})
	_, err := tl.Run(ctx, &tool.Call{Input: json.RawMessage(`{"url":"` + srv.URL + `/slow","prompt":"p"}`), Env: &tool.Env{}})
	if err != context.Canceled {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
