// Package servetemporal puts `agentloop serve` on Temporal: its flags
// (--temporal, --temporal-namespace, --task-queue, --worker) and the
// backend and worker they make, as an Extension of the serve command.
package servetemporal

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/serve/servecmd"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/temporal"
)

// DefaultQueue is the task queue of --task-queue's default.
const DefaultQueue = "agentloop-sessions"

// Extension returns the serve command's Temporal extension.
func Extension() *servecmd.Extension {
	var (
		hostPort, namespace, queue string
		runWorker                  bool
		idle                       time.Duration
	)
	return &servecmd.Extension{
		Name: "agentloop-temporal serve",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&hostPort, "temporal", "", "Temporal frontend HOST:PORT: sessions run as workflows there (required)")
			fs.StringVar(&namespace, "temporal-namespace", "default", "Temporal namespace of the sessions' workflows")
			fs.StringVar(&queue, "task-queue", DefaultQueue, "Temporal task queue of the sessions' workflows and activities")
			fs.BoolVar(&runWorker, "worker", true, "also run a worker of the task queue in this replica (false: an API front end only)")
			fs.DurationVar(&idle, "session-idle-timeout", 0, "how long a session's workflow waits for its next prompt before it ends "+
				"(its conversation is kept: the next prompt starts a new workflow from it); default 10m")
		},
		Backend: func(ctx context.Context, env servecmd.Env) (serve.Backend, func(*serve.Server) error, func(), error) {
			if hostPort == "" {
				return nil, nil, nil, errors.New("--temporal HOST:PORT is required")
			}
			if idle < 0 {
				return nil, nil, nil, fmt.Errorf("--session-idle-timeout %v is negative", idle)
			}
			dataDir := env.DataDir
			if dataDir == "" {
				dataDir = filepath.Join(os.TempDir(), "agentloop-serve")
			}
			store := env.Store
			if store == nil {
				store = session.NewFileStore(filepath.Join(dataDir, "store"))
			}
			// Large payloads (long conversations, large tool results) are
			// kept in the sessions' store, not in Temporal.
			c, err := client.DialContext(ctx, client.Options{HostPort: hostPort, Namespace: namespace,
				Logger:        tlog.NewStructuredLogger(env.Logger.With("component", "temporal")),
				DataConverter: temporal.SpillingDataConverter(store, 0)})
			if err != nil {
				return nil, nil, nil, fmt.Errorf("connecting to Temporal at %s: %w", hostPort, err)
			}
			b, err := temporal.ServeBackend(c, queue, env.Base, &temporal.SessionOptions{IdleTimeout: idle})
			if err != nil {
				c.Close()
				return nil, nil, nil, err
			}
			var w *temporal.Worker
			started := func(srv *serve.Server) error {
				if !runWorker {
					return nil
				}
				dir := filepath.Join(dataDir, "worker-"+uuid.NewString()[:8])
				var err error
				if w, err = temporal.NewWorker(c, queue, env.Base, nil); err != nil {
					return err
				}
				w.SessionBase(func(in temporal.SessionInput) (*agentloop.Options, error) {
					cfg := filepath.Join(dir, in.SessionID)
					if err := os.MkdirAll(cfg, 0o700); err != nil {
						return nil, fmt.Errorf("creating the session's configuration directory: %w", err)
					}
					return srv.SessionOptions(in.Cwd, cfg)
				})
				if err := w.Start(); err != nil {
					return fmt.Errorf("starting the Temporal worker: %w", err)
				}
				env.Logger.Info("temporal worker started", "queue", queue, "namespace", namespace)
				return nil
			}
			cleanup := func() {
				if w != nil {
					w.Stop()
				}
				c.Close()
			}
			return b, started, cleanup, nil
		},
	}
}
