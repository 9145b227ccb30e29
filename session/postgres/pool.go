package postgres

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Pool is a small pool of connections to one PostgreSQL database, on
// pgconn (the wire protocol layer of pgx) alone. [Open] makes one for its
// Store; [NewPool] makes one to share, for instance with serve's tenant
// table. It is safe for concurrent use.
//
// Unlike a pgxpool.Pool it does not link pgx's type system (pgtype),
// whose codecs for every PostgreSQL type are most of pgx's size: values
// go to the server as text (a []byte argument as binary, for bytea) and
// come back as text. A program that already uses pgx can build its Store
// on its pgxpool.Pool with package pgxstore instead.
type Pool struct {
	cfg *pgconn.Config
	sem chan struct{} // one token per connection that may be open
	// maxIdle and maxLife bound a connection's idle time and age
	// (pool_max_conn_idle_time, pool_max_conn_lifetime).
	maxIdle, maxLife time.Duration

	mu     sync.Mutex
	idle   []idleConn // most recently used last
	closed bool
}

// idleConn is a connection with its age; since is when it was given back.
type idleConn struct {
	c     *pgconn.PgConn
	since time.Time
	born  time.Time
}

// Connections idle longer than maxIdle, or older than maxLife, are closed
// instead of reused; one idle longer than pingAfter is pinged first
// (pgxpool's defaults; the connection string may change the first two).
const (
	maxIdle   = 30 * time.Minute
	maxLife   = time.Hour
	pingAfter = time.Second
)

// NewPool parses connString (a URL or key=value string as pgconn
// accepts, and the PG* environment variables) and returns a pool that
// connects on first use, like pgxpool.New. Of pgxpool's settings in the
// string it honours pool_max_conns (the number of connections; default
// the larger of 4 and the number of CPUs), pool_max_conn_lifetime and
// pool_max_conn_idle_time (Go durations); any other pool_* setting, and
// pgx's statement-cache and query-mode settings (this pool sends every
// statement as text), are refused with an error that names them: build
// the Store on a pgxpool.Pool with package pgxstore to use them.
func NewPool(ctx context.Context, connString string) (*Pool, error) {
	cfg, err := pgconn.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("postgres: connection string: %w", err)
	}
	p := &Pool{cfg: cfg, maxIdle: maxIdle, maxLife: maxLife}
	n := max(4, runtime.NumCPU())
	var refused []string
	for k, v := range cfg.RuntimeParams {
		switch {
		case k == "pool_max_conns":
			if n, err = strconv.Atoi(v); err != nil || n < 1 {
				return nil, fmt.Errorf("postgres: pool_max_conns %q: want a positive integer", v)
			}
		case k == "pool_max_conn_lifetime", k == "pool_max_conn_idle_time":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("postgres: %s %q: want a positive duration such as 1h or 30m", k, v)
			}
			if k == "pool_max_conn_lifetime" {
				p.maxLife = d
			} else {
				p.maxIdle = d
			}
		case strings.HasPrefix(k, "pool_"), k == "statement_cache_capacity",
			k == "description_cache_capacity", k == "default_query_exec_mode":
			refused = append(refused, k)
			continue
		default:
			continue // a run-time parameter for the server
		}
		delete(cfg.RuntimeParams, k)
	}
	if len(refused) > 0 {
		slices.Sort(refused)
		return nil, fmt.Errorf("postgres: connection string: %s not supported by the store's own pool "+
			"(it honours pool_max_conns, pool_max_conn_lifetime and pool_max_conn_idle_time); remove them, "+
			"or build the store on a pgxpool.Pool with pgxstore.New", strings.Join(refused, ", "))
	}
	p.sem = make(chan struct{}, n)
	return p, nil
}

// errPoolClosed is returned by a pool's methods after Close.
var errPoolClosed = errors.New("postgres: pool closed")

// Close closes the idle connections; those in use are closed when given
// back. Calls after the first do nothing.
func (p *Pool) Close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, ic := range idle {
		closeConn(ic.c)
	}
}

func closeConn(c *pgconn.PgConn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = c.Close(ctx)
}

// acquire returns a connection, idle or new, waiting for one to be given
// back when all are in use.
func (p *Pool) acquire(ctx context.Context) (idleConn, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return idleConn{}, ctx.Err()
	}
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			<-p.sem
			return idleConn{}, errPoolClosed
		}
		var ic idleConn
		ok := len(p.idle) > 0
		if ok {
			ic = p.idle[len(p.idle)-1]
			p.idle = p.idle[:len(p.idle)-1]
		}
		p.mu.Unlock()
		if !ok {
			break
		}
		now := time.Now()
		if ic.c.IsClosed() || now.Sub(ic.since) > p.maxIdle || now.Sub(ic.born) > p.maxLife ||
			now.Sub(ic.since) > pingAfter && ic.c.Ping(ctx) != nil {
			closeConn(ic.c)
			if err := ctx.Err(); err != nil {
				<-p.sem
				return idleConn{}, err
			}
			continue
		}
		return ic, nil
	}
	c, err := pgconn.ConnectConfig(ctx, p.cfg)
	if err != nil {
		<-p.sem
		return idleConn{}, err
	}
	return idleConn{c: c, born: time.Now()}, nil
}

// release gives c back: to the idle list if it is ready for another
// statement, closed otherwise.
func (p *Pool) release(ic idleConn) {
	c := ic.c
	p.mu.Lock()
	reuse := !p.closed && !c.IsClosed() && !c.IsBusy() && c.TxStatus() == 'I'
	if reuse {
		ic.since = time.Now()
		p.idle = append(p.idle, ic)
	}
	p.mu.Unlock()
	if !reuse {
		closeConn(c)
	}
	<-p.sem
}

// with runs f on a connection of the pool. A statement that failed
// before reaching the server (a connection that had died while idle) is
// retried once on a new connection.
func (p *Pool) with(ctx context.Context, f func(*pgconn.PgConn) error) error {
	for attempt := 0; ; attempt++ {
		ic, err := p.acquire(ctx)
		if err != nil {
			return err
		}
		err = f(ic.c)
		p.release(ic)
		if err == nil || attempt > 0 || !pgconn.SafeToRetry(err) || ctx.Err() != nil {
			return err
		}
	}
}

// Ping checks that the database answers.
func (p *Pool) Ping(ctx context.Context) error {
	if err := p.with(ctx, func(c *pgconn.PgConn) error { return c.Ping(ctx) }); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	return nil
}

// Exec runs one statement with args ($1, $2, ...): see [Pool.Query] for
// what they may be.
func (p *Pool) Exec(ctx context.Context, sql string, args ...any) error {
	if _, err := p.query(ctx, sql, args, nil); err != nil {
		return fmt.Errorf("postgres: exec: %w", err)
	}
	return nil
}

// Query runs one statement with args and returns its rows, each value in
// PostgreSQL's text format and NULL as nil. An argument is a string, a
// []byte (sent as binary: a bytea), an int, int64, float64 or bool, or
// nil (NULL); a *string is its string, or NULL when nil.
func (p *Pool) Query(ctx context.Context, sql string, args ...any) ([][][]byte, error) {
	rows, err := p.query(ctx, sql, args, nil)
	if err != nil {
		return nil, fmt.Errorf("postgres: query: %w", err)
	}
	return rows, nil
}

func (p *Pool) query(ctx context.Context, sql string, args []any, resultFormats []int16) ([][][]byte, error) {
	var rows [][][]byte
	err := p.with(ctx, func(c *pgconn.PgConn) error {
		var err error
		rows, err = query(ctx, c, sql, args, resultFormats)
		return err
	})
	return rows, err
}

// query runs one statement on c; resultFormats as pgconn takes them (nil:
// all text).
func query(ctx context.Context, c *pgconn.PgConn, sql string, args []any, resultFormats []int16) ([][][]byte, error) {
	vals, formats, err := encodeArgs(args)
	if err != nil {
		return nil, err
	}
	r := c.ExecParams(ctx, sql, vals, nil, formats, resultFormats).Read()
	return r.Rows, r.Err
}

// encodeArgs turns arguments into parameter values and formats.
func encodeArgs(args []any) ([][]byte, []int16, error) {
	vals := make([][]byte, len(args))
	formats := make([]int16, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case nil:
		case string:
			vals[i] = []byte(v)
		case *string:
			if v != nil {
				vals[i] = []byte(*v)
			}
		case []byte:
			vals[i], formats[i] = v, 1
			if v == nil {
				vals[i] = []byte{}
			}
		case int:
			vals[i] = strconv.AppendInt(nil, int64(v), 10)
		case int64:
			vals[i] = strconv.AppendInt(nil, v, 10)
		case float64:
			vals[i] = strconv.AppendFloat(nil, v, 'g', -1, 64)
		case bool:
			vals[i] = []byte(strconv.FormatBool(v))
		default:
			return nil, nil, fmt.Errorf("postgres: argument %d: unsupported type %T", i+1, a)
		}
	}
	return vals, formats, nil
}

// quoteIdent quotes an identifier as PostgreSQL reads it.
func quoteIdent(parts ...string) string {
	q := make([]string, len(parts))
	for i, p := range parts {
		q[i] = `"` + strings.ReplaceAll(strings.ReplaceAll(p, "\x00", ""), `"`, `""`) + `"`
	}
	return strings.Join(q, ".")
}
