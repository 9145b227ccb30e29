package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// TestACPSubcommand: `agentloop acp` answers initialize on stdout and
// exits 0 when stdin ends; a bad flag is a usage error.
func TestACPSubcommand(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb bytes.Buffer
	code := make(chan int, 1)
	go func() { code <- run(context.Background(), []string{"acp"}, inR, outW, &errb) }()
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"id":1`, `"name":"agentloop"`, `"loadSession":true`} {
		if !strings.Contains(line, want) {
			t.Errorf("the answer lacks %s: %s", want, line)
		}
	}
	inW.Close()
	if c := <-code; c != exitOK {
		t.Errorf("exit %d, stderr %s", c, errb.String())
	}
	errb.Reset()
	if c := run(context.Background(), []string{"acp", "--no-such-flag"}, strings.NewReader(""), io.Discard, &errb); c != exitFailure ||
		!strings.Contains(errb.String(), "--no-such-flag") {
		t.Errorf("bad flag: exit %d, stderr %q", c, errb.String())
	}
}
