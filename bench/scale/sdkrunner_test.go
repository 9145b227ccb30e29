package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/bench/scale/internal/result"
	"github.com/agentloop/agentloop/bench/scale/internal/script"
)

// TestRunSDKRunner runs the SDK's tool runner and agentloop on the Read
// workload, over HTTP/1.1 and over TLS, and checks that every session
// completes its turns and that TLS runs speak HTTP/2.
func TestRunSDKRunner(t *testing.T) {
	fixture, err := script.WriteFixture(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, useTLS := range []bool{false, true} {
		for _, mode := range []string{result.ModeSDKRunner, result.ModeInproc} {
			for _, client := range []string{"", clientShipped} {
				t.Run(fmt.Sprintf("%s tls=%v client=%s", mode, useTLS, client), func(t *testing.T) {
					cfg := &config{mode: mode, sessions: 3, turns: 2, fixture: fixture, configDir: t.TempDir(), prompt: "go",
						workload: script.WorkloadRead, tls: useTLS, client: client}
					opts := &agentlooptest.ServerOptions{}
					if useTLS {
						certFile, keyFile, roots, err := selfSignedCert(t.TempDir())
						if err != nil {
							t.Fatal(err)
						}
						cert, err := tls.LoadX509KeyPair(certFile, keyFile)
						if err != nil {
							t.Fatal(err)
						}
						opts.TLS, cfg.tlsRoots = &tls.Config{Certificates: []tls.Certificate{cert}}, roots
					}
					srv, err := agentlooptest.StartWith(opts)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(srv.Close)
					srv.SetRouter(func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
						if done := script.ToolResults(len(r.Params.Messages)); done < cfg.turns {
							c := script.StepFor(cfg.workload, fixture, done)
							return agentlooptest.ToolUse(fmt.Sprintf("toolu_%d", done), c.Name, c.Input), true
						}
						return agentlooptest.Text(script.Answer), true
					})
					cfg.serverURL = srv.URL
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					http2Replies.Store(0)
					var rec result.Record
					run := runInproc
					if mode == result.ModeSDKRunner {
						run = runSDKRunner
					}
					if err := run(ctx, cfg, &rec); err != nil {
						t.Fatal(err)
					}
					if rec.Turns != 9 || rec.Errors != 0 {
						t.Fatalf("%d turns, %d errors (first: %s); want 9, 0", rec.Turns, rec.Errors, rec.FirstErr)
					}
					if want := map[bool]float64{false: 0, true: 1}[useTLS]; rec.HTTP2Share != want {
						t.Errorf("HTTP/2 share %v, want %v", rec.HTTP2Share, want)
					}
				})
			}
		}
	}
}
