// Package servecmd is the `agentloop serve` command: its flags, its stores
// and tenants, its HTTP server and its drain. The agentloop binary runs
// it as is; a binary that adds a session backend (the temporal module's
// agentloop-temporal) runs it with an Extension.
package servecmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/otel"
	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/session/postgres"
	redisstore "github.com/agentloop/agentloop/session/redis"
	"github.com/agentloop/agentloop/settings"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
)

// telemetryFlushTimeout bounds the flush of telemetry at exit.
const telemetryFlushTimeout = 5 * time.Second

// An Extension adds a session backend to the command. Its fields may be
// nil.
type Extension struct {
	// Name is the command's name in messages and help
	// ("agentloop-temporal serve"); empty means "agentloop serve".
	Name string
	// Flags registers the extension's flags.
	Flags func(fs *flag.FlagSet)
	// Backend is called once the flags are parsed, before the server is
	// made, with the options every session starts from. It returns the
	// sessions' backend (nil: in-process), a function called with the
	// server once it is made and before it serves (starting workers), and
	// a cleanup run when the command ends.
	Backend func(ctx context.Context, env Env) (serve.Backend, func(*serve.Server) error, func(), error)
}

// Env is what an Extension's Backend gets.
type Env struct {
	Base   *agentloop.Options
	Logger *slog.Logger
	// DataDir is --data-dir (may be empty: a directory under os.TempDir).
	DataDir string
	// Store is the sessions' store of --database-url; nil means the file
	// store under DataDir/store (serve.Config.Store).
	Store session.Store
}

// serveUsage is the help of `agentloop serve`.
const serveUsage = `Usage: agentloop serve --root DIR (--tokens-file FILE | --database-url URL) [flags]

Hosts agentloop sessions over HTTP (see docs/serve.md): the /v1 API, the
web page at /, /healthz, /readyz and /metrics. SIGTERM or SIGINT drains:
readyz turns 503, running turns get --drain-timeout to finish and are
then interrupted, sessions are closed and their leases released.

Flags:
`

// Run runs the command until ctx ends (a signal), then drains, and
// returns its exit code. ext may be nil.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, ext *Extension) int {
	if ext == nil {
		ext = &Extension{}
	}
	name := ext.Name
	if name == "" {
		name = "agentloop serve"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, serveUsage)
		fs.PrintDefaults()
	}
	var (
		addr         = fs.String("addr", "127.0.0.1:8080", "address to listen on")
		root         = fs.String("root", "", "directory of the sessions' working directories (required; the same path on every replica)")
		dataDir      = fs.String("data-dir", "", "local data: the file store when there is no --database-url, scratch session directories")
		databaseURL  = fs.String("database-url", "", "PostgreSQL URL (postgres://…): sessions (and tokens, without --tokens-file) are kept there, shared by replicas; or a Redis URL (redis://…): sessions only")
		dbTable      = fs.String("database-table", postgres.DefaultTable, "table of the sessions in --database-url")
		redisPrefix  = fs.String("redis-prefix", "agentloop:", "with a redis:// --database-url, the prefix of every key")
		tokensFile   = fs.String("tokens-file", "", `JSON file of tokens: {"tokens":[{"sha256":"<hex>","tenant":"id","max_concurrent":N,"daily_budget_usd":X}]}`)
		replicaID    = fs.String("replica-id", "", "this replica's id in leases and 409 answers (default: host name and a random suffix)")
		leaseTTL     = fs.Duration("lease-ttl", 0, "how long a session's lease holds without renewal (default 1m)")
		idleRelease  = fs.Duration("idle-release", 30*time.Second, "close an idle session here and release its lease after this long")
		drainTimeout = fs.Duration("drain-timeout", 30*time.Second, "on SIGTERM, how long running turns may finish before they are interrupted")
		maxBody      = fs.Int64("max-body-bytes", 1<<20, "largest request body accepted (413 above)")
		cors         = fs.String("cors-origins", "", "comma-separated origins allowed to call the API from browsers (default: CORS off)")
		settingsArg  = fs.String("settings", "", "settings file or inline JSON applied to every session (permissions, sandbox, env)")
		sourcesArg   = fs.String("setting-sources", "user", `settings files sessions load: user,project,local ("" for none). project and local read the tenant's own working directory: its hooks then run as this server's user`)
		modelArg     = fs.String("model", "", "default model of sessions that name none")
		logLevel     = fs.String("log-level", "info", "debug, info, warn or error")
		allowModes   = fs.String("allow-modes", "", "permission modes tenants may ask for beyond default, acceptEdits, plan and dontAsk (bypassPermissions, auto), comma-separated")
		unsafeNoSbx  = fs.Bool("unsafe-no-sandbox", false, "serve even where the kernel cannot sandbox the tenants' commands (they then run unconfined: only for trusted tenants)")
	)
	if ext.Flags != nil {
		ext.Flags(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitFailure
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", name, fs.Arg(0))
		return exitFailure
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(stderr, "%s: --log-level: %v\n", name, err)
		return exitFailure
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	fail := func(format string, a ...any) int {
		logger.Error(fmt.Sprintf(format, a...))
		return exitFailure
	}
	if *root == "" {
		return fail("--root is required")
	}
	if *tokensFile == "" && *databaseURL == "" {
		return fail("--tokens-file or --database-url is required (there must be a way to check tokens)")
	}
	sources := []settings.SettingSource{}
	for _, src := range splitList(*sourcesArg) {
		switch src {
		case "user", "project", "local":
			sources = append(sources, settings.SettingSource(src))
		default:
			return fail("--setting-sources %q: want a list of user, project and local", *sourcesArg)
		}
	}
	if tw := serve.TenantWritableSources(sources); len(tw) > 0 {
		logger.Warn("--setting-sources names sources that tenants write: the settings, hooks, CLAUDE.md, agents, skills and commands "+
			"of a session's working directory are loaded (a tenant's command hooks run inside its sandbox, and not where --settings "+
			"deny rules cover their command); use it only for tenants trusted with that (docs/serve.md)", "sources", tw)
	}
	cfg := serve.Config{Root: *root, DataDir: *dataDir, ReplicaID: *replicaID, LeaseTTL: *leaseTTL,
		IdleRelease: *idleRelease, MaxBodyBytes: *maxBody, Logger: logger, SettingSources: sources,
		Base: &agentloop.Options{Settings: *settingsArg, Model: *modelArg}, UnsafeNoSandbox: *unsafeNoSbx}
	for _, m := range splitList(*allowModes) {
		pm, err := agentloop.ParsePermissionMode(m)
		if err != nil {
			return fail("--allow-modes: %v", err)
		}
		cfg.AllowModes = append(cfg.AllowModes, pm)
	}
	// No tenant command reads the tokens or the settings file.
	for _, p := range []string{*tokensFile, *settingsArg} {
		if t := strings.TrimSpace(p); t != "" && !strings.HasPrefix(t, "{") {
			if abs, err := filepath.Abs(t); err == nil {
				cfg.Protect = append(cfg.Protect, abs)
			}
		}
	}
	if *cors != "" {
		for _, o := range strings.Split(*cors, ",") {
			if o = strings.TrimSpace(o); o != "" {
				cfg.CORSOrigins = append(cfg.CORSOrigins, o)
			}
		}
	}
	startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	isRedis := strings.HasPrefix(*databaseURL, "redis://") || strings.HasPrefix(*databaseURL, "rediss://")
	prefixSet, tableSet := false, false
	fs.Visit(func(f *flag.Flag) {
		prefixSet = prefixSet || f.Name == "redis-prefix"
		tableSet = tableSet || f.Name == "database-table"
	})
	switch {
	case prefixSet && !isRedis:
		return fail("--redis-prefix is for a redis:// --database-url")
	case tableSet && (isRedis || *databaseURL == ""):
		return fail("--database-table is for a PostgreSQL --database-url")
	}
	var pgPool *postgres.Pool // the store's, shared with the tenants
	switch {
	case isRedis:
		if *tokensFile == "" {
			return fail("--database-url %s: with Redis the tokens come from --tokens-file (only PostgreSQL keeps them)", redactURL(*databaseURL))
		}
		store, err := redisstore.Open(startCtx, *databaseURL, &redisstore.Options{Prefix: *redisPrefix})
		if err != nil {
			return fail("connecting to Redis at %s: %v", redactURL(*databaseURL), err)
		}
		defer store.Close()
		cfg.Store = store
	case *databaseURL != "":
		pool, err := postgres.NewPool(startCtx, *databaseURL)
		if err != nil {
			return fail("--database-url: %v", err)
		}
		defer pool.Close()
		pgPool = pool
		store, err := postgres.NewWithPool(startCtx, pool, &postgres.Options{Table: *dbTable})
		if err != nil {
			return fail("opening the session store: %v", err)
		}
		cfg.Store = store
	}
	if *tokensFile != "" {
		t, err := serve.LoadTenantsFile(*tokensFile)
		if err != nil {
			return fail("%v", err)
		}
		cfg.Tenants = t
	} else {
		if pgPool == nil { // no --database-url: the PG* environment's database
			pool, err := postgres.NewPool(startCtx, *databaseURL)
			if err != nil {
				return fail("connecting to the database: %v", err)
			}
			defer pool.Close()
			pgPool = pool
		}
		t, err := serve.NewPostgresTenantsPool(startCtx, pgPool, "")
		if err != nil {
			return fail("%v", err)
		}
		cfg.Tenants = t
	}
	obs, shutdownTelemetry, err := otel.FromEnv(ctx)
	if err != nil {
		logger.Warn("telemetry is off", "err", err)
	} else if obs != nil {
		cfg.Observer = obs
		defer func() {
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), telemetryFlushTimeout)
			defer cancel()
			_ = shutdownTelemetry(fctx)
		}()
	}
	var started func(*serve.Server) error
	if ext.Backend != nil {
		b, st, cleanup, err := ext.Backend(ctx, Env{Base: cfg.Base, Logger: logger, DataDir: *dataDir, Store: cfg.Store})
		if err != nil {
			return fail("%v", err)
		}
		if cleanup != nil {
			defer cleanup()
		}
		cfg.Backend, started = b, st
	}
	srv, err := serve.New(cfg)
	if err != nil {
		return fail("%v", err)
	}
	if started != nil {
		if err := started(srv); err != nil {
			return fail("%v", err)
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fail("listening on %s: %v", *addr, err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	logger.Info("serving", "addr", ln.Addr().String(), "replica", srv.ReplicaID())
	fmt.Fprintf(stdout, "%s: listening on http://%s\n", name, ln.Addr())
	select {
	case err := <-served:
		return fail("serving: %v", err)
	case <-ctx.Done():
	}
	logger.Info("signal: draining", "cause", context.Cause(ctx), "timeout", drainTimeout.String())
	dctx, dcancel := context.WithTimeout(context.Background(), *drainTimeout)
	defer dcancel()
	if err := srv.Drain(dctx); err != nil {
		logger.Warn("drain", "err", err)
	}
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	if err := hs.Shutdown(sctx); err != nil {
		logger.Warn("shutting the listener down", "err", err)
	}
	logger.Info("stopped")
	return exitOK
}

// redactURL is u without its password, for messages.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(an unparsable URL)"
	}
	return p.Redacted()
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
