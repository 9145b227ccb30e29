package agentlooptest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/http2"

	"github.com/agentloop/agentloop/agentlooptest"
)

// h2cClient returns a client that speaks only HTTP/2 without TLS (prior
// knowledge), as a load test that wants few connections would.
func h2cClient() *http.Client {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: tr}
}

// postWith sends a streaming messages request with c and reads its events.
func postWith(t *testing.T, c *http.Client, url string) (proto int, evs []event, readErr, err error) {
	t.Helper()
	b, err := json.Marshal(request(true, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Post(url+"/v1/messages", "application/json", bytes.NewReader(b))
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	evs, readErr = readSSE(resp.Body)
	return resp.ProtoMajor, evs, readErr, nil
}

func eventNames(evs []event) []string {
	var names []string
	for _, e := range evs {
		names = append(names, e.Name)
	}
	return names
}

func TestH2C(t *testing.T) {
	full := []string{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	cut := agentlooptest.Text("hello")
	cut.CutAfter = 3
	tests := []struct {
		name      string
		opts      *agentlooptest.ServerOptions
		client    *http.Client
		reply     agentlooptest.Reply
		wantProto int // 0: the request fails
		wantEvs   []string
		wantBreak bool // the body ends in a read error
	}{
		{"h2c client gets HTTP/2", &agentlooptest.ServerOptions{H2C: true}, h2cClient(), agentlooptest.Text("hello"), 2, full, false},
		{"HTTP/1.1 client still served", &agentlooptest.ServerOptions{H2C: true}, &http.Client{Transport: &http.Transport{}}, agentlooptest.Text("hello"), 1, full, false},
		{"cut reply resets the stream", &agentlooptest.ServerOptions{H2C: true}, h2cClient(), cut, 2, full[:3], true},
		{"default server refuses h2c", nil, h2cClient(), agentlooptest.Text("hello"), 0, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := agentlooptest.StartWith(tt.opts, tt.reply)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			defer tt.client.CloseIdleConnections()
			proto, evs, readErr, err := postWith(t, tt.client, s.URL)
			if tt.wantProto == 0 {
				if err == nil {
					t.Fatalf("request succeeded over HTTP/%d, want it to fail", proto)
				}
				return
			}
			if err != nil {
				t.Fatalf("request: %v", err)
			}
			if proto != tt.wantProto {
				t.Errorf("response over HTTP/%d, want HTTP/%d", proto, tt.wantProto)
			}
			if diff := cmp.Diff(tt.wantEvs, eventNames(evs)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if (readErr != nil) != tt.wantBreak {
				t.Errorf("read error %v, want a break: %v", readErr, tt.wantBreak)
			}
			if m := s.Mismatches(); len(m) > 0 {
				t.Errorf("mismatches: %v", m)
			}
		})
	}
}

// TestH2CConcurrentOneConnection shows concurrent requests sharing one
// HTTP/2 connection, and Close ending the replies still waiting on it.
func TestH2CConcurrentOneConnection(t *testing.T) {
	s, err := agentlooptest.StartWith(&agentlooptest.ServerOptions{H2C: true})
	if err != nil {
		t.Fatal(err)
	}
	slow := agentlooptest.Text("late")
	slow.Delay = time.Hour
	s.SetRouter(func(*agentlooptest.Request) (agentlooptest.Reply, bool) { return slow, true })

	var dials atomic.Int32
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	c := &http.Client{Transport: tr}
	defer c.CloseIdleConnections()

	const n = 20
	errs := make(chan error, n)
	send := func() {
		_, _, readErr, err := postWith(t, c, s.URL)
		errs <- errors.Join(err, readErr)
	}
	waitFor := func(k int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); s.Len() < k && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		if got := s.Len(); got != k {
			t.Fatalf("%d requests arrived, want %d", got, k)
		}
	}
	go send() // the first opens the connection, the others find it
	waitFor(1)
	for range n - 1 {
		go send()
	}
	waitFor(n)
	if got := dials.Load(); got != 1 {
		t.Errorf("%d requests in flight on %d connections, want 1", n, got)
	}

	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return with HTTP/2 replies waiting")
	}
	for range n {
		if err := <-errs; err == nil {
			t.Error("a reply waiting when the server closed ended without an error")
		}
	}
}

// TestH2CConnectionWindow reads the server's first frames over a raw
// h2c connection: it raises the connection's flow-control window to the
// largest HTTP/2 allows, so concurrent requests on one connection never
// wait for each other's bodies to be read, and leaves per-stream flow
// control in force.
func TestH2CConnectionWindow(t *testing.T) {
	s, err := agentlooptest.StartWith(&agentlooptest.ServerOptions{H2C: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	connWindow := int64(65535) // every connection's initial window
	streamWindow := int64(-1)
	for gotSettings, gotUpdate := false, false; !gotSettings || !gotUpdate; {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("reading the server's frames: %v", err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if f.IsAck() {
				continue
			}
			gotSettings = true
			if v, ok := f.Value(http2.SettingInitialWindowSize); ok {
				streamWindow = int64(v)
			}
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 {
				gotUpdate = true
				connWindow += int64(f.Increment)
			}
		}
	}
	if connWindow != 1<<31-1 {
		t.Errorf("connection window = %d, want %d", connWindow, 1<<31-1)
	}
	if streamWindow <= 0 || streamWindow >= 1<<31-1 {
		t.Errorf("stream window = %d, want a bound", streamWindow)
	}
}
