package agentlooptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
)

// copyBodies returns a copy of bodies that renumber can change on its own.
func copyBodies(bodies [][]byte) [][]byte {
	out := make([][]byte, len(bodies))
	for i, b := range bodies {
		out[i] = bytes.Clone(b)
	}
	return out
}

// TestMessageCacheHits checks that the messages a session repeats are
// decoded once: of the 36 messages of its six requests, 11 are new (the
// first user message, then per request the new assistant and user
// messages) and 25 are found in the cache, 5 of them the previous
// request's last message without its breakpoint, stored when the marked
// one was decoded (17 entries: the last request's unmarked message is
// never used); and that every answer is decodeParams's.
func TestMessageCacheHits(t *testing.T) {
	tests := []struct {
		name               string
		sessions           int
		wantHits, wantMiss int
	}{
		{"one session", 1, 25, 11},
		{"three sessions", 3, 75, 33},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bodies := sessionBodies(t)
			marks := markOffsets(bodies)
			var d decoder
			for n := range tt.sessions {
				renumber(bodies, marks, n)
				for i, body := range bodies {
					want, err := decodeParams(body)
					if err != nil {
						t.Fatal(err)
					}
					got, ok := d.fast(body)
					if !ok {
						t.Fatalf("session %d request %d: the fast path refused it", n, i)
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("session %d request %d differs (-plain +fast):\n%s", n, i, diff)
					}
				}
			}
			hits, misses, entries, _ := d.msgs.stats()
			wantEntries := tt.wantMiss + 6*tt.sessions
			if hits != tt.wantHits || misses != tt.wantMiss || entries != wantEntries {
				t.Errorf("hits, misses, entries = %d, %d, %d; want %d, %d, %d", hits, misses, entries, tt.wantHits, tt.wantMiss, wantEntries)
			}
		})
	}
}

// messageBody returns a request of one user message whose text is text.
func messageBody(text string) []byte {
	b, _ := json.Marshal(model.Request{Model: "m", MaxTokens: 1, Messages: []model.Message{
		{Role: "user", Content: []model.Content{model.TextBlock(text)}},
	}})
	return b
}

// TestMessageCacheEviction checks the byte bound: the shards never hold
// more than their share, a message in constant use stays, and a message
// longer than a shard's share is decoded but not kept; and, with a sample
// as large as the shards (LRU), that the least recently used message goes
// first.
func TestMessageCacheEviction(t *testing.T) {
	if testing.Short() {
		t.Skip("a stress test of many sessions; go test without -short runs it")
	}
	tests := []struct {
		name   string
		sample int
		lru    bool
	}{
		{"sampled", 0, false},
		{"random", 1, false},
		{"LRU", 1 << 20, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { testEviction(t, tt.sample, tt.lru) })
	}
}

func testEviction(t *testing.T, sample int, lru bool) {
	const limit = msgShards * 1024
	var d decoder
	d.msgs.limit = limit
	d.msgs.sample = sample
	hot := messageBody("hot")
	misses := func() int { _, m, _, _ := d.msgs.stats(); return m }
	hotMisses := 0
	for i := range 2000 {
		body := messageBody(fmt.Sprintf("message %d %s", i, strings.Repeat("x", i%200)))
		want, _ := decodeParams(body)
		got, ok := d.fast(body)
		if !ok {
			t.Fatalf("message %d: refused", i)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("message %d differs (-plain +fast):\n%s", i, diff)
		}
		before := misses()
		if _, ok := d.fast(hot); !ok { // keep this one in use
			t.Fatal("hot message refused")
		}
		hotMisses += misses() - before
		for s := range d.msgs.shards {
			sh := &d.msgs.shards[s]
			sh.mu.Lock()
			size, n := sh.bytes, len(sh.all)
			sh.mu.Unlock()
			if size > limit/msgShards {
				t.Fatalf("after message %d: shard %d holds %d bytes, more than %d", i, s, size, limit/msgShards)
			}
			if size > 0 && n == 0 {
				t.Fatalf("after message %d: shard %d counts %d bytes in no entries", i, s, size)
			}
		}
	}
	_, _, entries, size := d.msgs.stats()
	if size > limit || entries < 100 {
		t.Errorf("the cache holds %d entries of %d bytes; want at most %d bytes in many entries", entries, size, limit)
	}
	if sample != 1 && hotMisses != 1 {
		t.Errorf("the message used after every other one missed %d times, want once", hotMisses)
	}
	if lru {
		before := misses()
		d.fast(messageBody("message 0 "))
		if misses() != before+1 {
			t.Error("the first, least recently used message is still cached")
		}
	}

	big := messageBody(strings.Repeat("big ", limit/msgShards))
	want, _ := decodeParams(big)
	for pass := range 2 {
		before := misses()
		got, ok := d.fast(big)
		if !ok {
			t.Fatal("a message longer than a shard's share was refused")
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("pass %d: long message differs (-plain +fast):\n%s", pass, diff)
		}
		if misses() != before {
			t.Fatal("a message longer than a shard's share went through the cache")
		}
	}
	if _, _, _, size := d.msgs.stats(); size > limit {
		t.Errorf("the cache holds %d bytes, more than %d", size, limit)
	}
}

// TestMessageCacheOff checks that a negative limit turns the cache off and
// leaves the answers unchanged.
func TestMessageCacheOff(t *testing.T) {
	var d decoder
	d.msgs.limit = -1
	for _, c := range decodeCases(t) {
		want, werr := decodeParams([]byte(c.body))
		got, gerr := d.decode([]byte(c.body))
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%s: decode error %v, plain decoder's %v", c.name, gerr, werr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s: differs (-plain +decode):\n%s", c.name, diff)
		}
	}
	if hits, misses, entries, _ := d.msgs.stats(); hits+misses+entries != 0 {
		t.Errorf("a cache that is off was used: %d hits, %d misses, %d entries", hits, misses, entries)
	}
}

// TestMessageCacheConcurrent decodes many sessions at once through a small
// cache (so that entries are evicted while others read them) and checks
// every answer; run it with -race.
func TestMessageCacheConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("a stress test of many sessions; go test without -short runs it")
	}
	var d decoder
	d.msgs.limit = msgShards * 16 << 10
	bodies := sessionBodies(t)
	marks := markOffsets(bodies)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			mine := copyBodies(bodies)
			for n := range 6 {
				renumber(mine, marks, g*10+n%3) // sessions shared by goroutines, and repeated
				for i, body := range mine {
					want, err := decodeParams(body)
					if err != nil {
						errs <- err.Error()
						return
					}
					got, err := d.decode(body)
					if err != nil {
						errs <- err.Error()
						return
					}
					if diff := cmp.Diff(want, got); diff != "" {
						errs <- fmt.Sprintf("goroutine %d session %d request %d (-plain +decode):\n%s", g, n, i, diff)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if hits, _, _, _ := d.msgs.stats(); hits == 0 {
		t.Error("no message was found in the cache")
	}
}

// mutateRequest changes everything a test could change in p's messages
// and system blocks.
func mutateRequest(p *model.Request) {
	for i := range p.Messages {
		m := &p.Messages[i]
		m.Role = "changed"
		for j := range m.Content {
			mutateContent(&m.Content[j])
		}
		m.Content = append(m.Content, model.TextBlock("appended"))
	}
	p.Messages = append(p.Messages, model.Message{Role: "appended"})
	for j := range p.System {
		mutateContent(&p.System[j])
	}
}

func mutateContent(c *model.Content) {
	c.Text = "changed"
	for k := range c.Input {
		c.Input[k] = ' '
	}
	for k := range c.Raw {
		c.Raw[k] = ' '
	}
	if c.CacheControl != nil {
		c.CacheControl.Type = "changed"
	}
	if c.Source != nil {
		c.Source.Data = "changed"
	}
	if c.IsError != nil {
		*c.IsError = !*c.IsError
	}
	for k := range c.Blocks {
		mutateContent(&c.Blocks[k])
	}
	if c.Blocks != nil {
		c.Blocks = append(c.Blocks, model.TextBlock("appended"))
	}
}

// TestDecodeFastCopiesMessages checks that a change to one decoded
// request's messages, at any depth, shows neither in another request of
// the same bytes nor in the cache.
func TestDecodeFastCopiesMessages(t *testing.T) {
	var d decoder
	for _, c := range decodeCases(t) {
		if !c.fast {
			continue
		}
		body := []byte(c.body)
		want, _ := decodeParams(body)
		a, _ := d.decode(body)
		b, _ := d.decode(body)
		mutateRequest(&a)
		if diff := cmp.Diff(want, b); diff != "" {
			t.Errorf("%s: a change to one request showed in another (-want +got):\n%s", c.name, diff)
		}
		if got, _ := d.decode(body); !cmp.Equal(want, got) {
			t.Errorf("%s: a change to one request showed in the next one decoded", c.name)
		}
	}
}

// TestServerRequestsDoNotShareMessages checks the same through a server:
// changing a recorded request leaves another one, of the same body,
// unchanged.
func TestServerRequestsDoNotShareMessages(t *testing.T) {
	s := NewServer(Text("a"), Text("b"))
	defer s.Close()
	body := sessionBodies(t)[2]
	for range 2 {
		resp, err := http.Post(s.URL+"/v1/messages", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	want, err := decodeParams(body)
	if err != nil {
		t.Fatal(err)
	}
	mutateRequest(&reqs[0].Params)
	got := reqs[1].Params
	got.Betas = nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a change to one recorded request showed in another (-want +got):\n%s", diff)
	}
}

// TestBreakpointMoveHits checks which marked messages the cache also
// stores unmarked: a body of a marked message and the same without the
// mark finds the second in the cache only when removing the mark's bytes
// surely gives the unmarked message's decoding (TestDecodeFastMatchesPlain
// checks the answers).
func TestBreakpointMoveHits(t *testing.T) {
	tests := []struct {
		before, mark, after string
		hit                 bool
	}{
		{`{"type":"text","text":"x"`, `,"cache_control":{"type":"ephemeral"}`, `}`, true},
		{`{"type":"text","text":"x"`, "\n , \"cache_control\" : {\"type\":\"ephemeral\",\"ttl\":\"5m\"}", `}`, true},
		{`{"type":"text","text":"x"`, `,"cache_control":{"type":"ephemeral"}` + "\n", `}`, false}, // the unmarked block has no space
		{`{"type":"text"`, `,"cache_control":{"type":"ephemeral"}`, `,"text":"x"}`, true},
		{`{"type":"image","source":{"type":"url","url":"u"}`, `,"cache_control":{"type":"ephemeral"}`, `}`, true},
		{`{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"r"}]`, `,"cache_control":{"type":"ephemeral"}`, `}`, true},
		{`{"type":"text","text":"x","citations":[]`, `,"cache_control":{"type":"ephemeral"}`, `}`, true},
		{`{`, `"cache_control":{"type":"ephemeral"},`, `"type":"text","text":"x"}`, false},
		{`{"type":"text","text":"x","cache_control":{"type":"ephemeral"}`, `,"cache_control":{"type":"ephemeral"}`, `}`, false},
		{`{"type":"text","text":"x","Cache_Control":{"type":"ephemeral"}`, `,"cache_control":{"type":"ephemeral"}`, `}`, false},
		{`{"type":"text","text":"x"`, `,"CACHE_CONTROL":{"type":"ephemeral"}`, `}`, false},
		{`{"type":"text","text":"x"`, `,"cache_control":null`, `}`, false},
		{`{"type":"mystery","text":"x"`, `,"cache_control":{"type":"ephemeral"}`, `}`, false},
	}
	for _, tt := range tests {
		c := moved("", tt.before, tt.mark, tt.after)
		var d decoder
		want, err := decodeParams([]byte(c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		got, ok := d.fast([]byte(c.body))
		if !ok {
			t.Fatalf("%s: refused", c.body)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s: differs (-plain +fast):\n%s", c.body, diff)
		}
		if hits, _, _, _ := d.msgs.stats(); (hits == 1) != tt.hit || hits > 1 {
			t.Errorf("%s: %d hits, want hit %v", c.body, hits, tt.hit)
		}
	}
}
