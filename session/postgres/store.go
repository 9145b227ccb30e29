package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentloop/agentloop/session"
	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultTable is the table a Store uses unless [Options.Table] is set.
const DefaultTable = "agentloop_session_entries"

// SchemaVersion is the version of the table layout this package writes;
// a new Store records it in the table's comment as "agentloop session store v<N>".
const SchemaVersion = 1

// ErrSchemaVersion is returned by [Open], [NewWithPool] and [NewWithConns]
// when the table exists but was not created by this version of the
// package.
var ErrSchemaVersion = errors.New("postgres: session table has an unsupported schema")

// Options configures a Store. The zero value (or nil) is ready to use.
type Options struct {
	// Table is the name of the entries table, optionally qualified by a
	// schema ("myschema.sessions"). Each part must be an identifier of
	// letters, digits and underscores, not starting with a digit, of at
	// most 48 characters. Default DefaultTable.
	Table string
}

// Store is a [session.Store] in a PostgreSQL table. It is safe for
// concurrent use.
type Store struct {
	conns  Conns
	owned  *Pool // the pool Open made, closed by Close; nil otherwise
	table  string
	q      queries
	listen listener // watch.go
}

type queries struct {
	insert, load, list, deleteOne, deleteAll, subkeys string
}

var _ session.Store = (*Store)(nil)

// validIdent reports whether p is an unquoted identifier of at most 48
// characters: a letter or underscore, then letters, digits and
// underscores. (A loop, not a regular expression compiled at start-up
// by every process that links this package.)
func validIdent(p string) bool {
	if len(p) == 0 || len(p) > 48 {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// parseTable splits and validates a possibly schema-qualified table name.
func parseTable(name string) ([]string, error) {
	if name == "" {
		name = DefaultTable
	}
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return nil, fmt.Errorf("postgres: invalid table name %q", name)
	}
	for _, p := range parts {
		if !validIdent(p) {
			return nil, fmt.Errorf("postgres: invalid table name %q", name)
		}
	}
	return parts, nil
}

func comment() string { return fmt.Sprintf("agentloop session store v%d", SchemaVersion) }

// NewWithPool returns a Store keeping entries in a table of the database
// pool connects to, creating the table and its indexes if they are
// missing. The caller keeps ownership of pool: Close does not close it.
func NewWithPool(ctx context.Context, pool *Pool, opts *Options) (*Store, error) {
	if pool == nil {
		return nil, errors.New("postgres: nil pool")
	}
	return makeStore(ctx, poolConns{pool}, opts)
}

// NewWithConns is [NewWithPool] on the connections conns lends: the
// seam for a pool other than [Pool] (package pgxstore passes a
// pgxpool.Pool's). The caller keeps ownership of conns: Close does not
// close them.
func NewWithConns(ctx context.Context, conns Conns, opts *Options) (*Store, error) {
	if conns == nil {
		return nil, errors.New("postgres: nil Conns")
	}
	return makeStore(ctx, conns, opts)
}

func makeStore(ctx context.Context, conns Conns, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	id, err := parseTable(o.Table)
	if err != nil {
		return nil, err
	}
	s := &Store{conns: conns, table: quoteIdent(id...)}
	if err := s.migrate(ctx, id); err != nil {
		return nil, err
	}
	t := s.table
	s.q = queries{
		insert: "INSERT INTO " + t + " (project_key, session_id, subpath, uuid, entry) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
		load:   "SELECT entry FROM " + t + " WHERE project_key = $1 AND session_id = $2 AND subpath = $3 ORDER BY seq",
		// The time as whole milliseconds since 1970: a text value that
		// needs no time zone or date style to read.
		list: "SELECT session_id, floor(extract(epoch FROM max(created_at)) * 1000)::bigint FROM " + t +
			" WHERE project_key = $1 AND subpath = '' GROUP BY session_id ORDER BY max(created_at) DESC, 1",
		deleteOne: "DELETE FROM " + t + " WHERE project_key = $1 AND session_id = $2 AND subpath = $3",
		deleteAll: "DELETE FROM " + t + " WHERE project_key = $1 AND session_id = $2",
		subkeys: "SELECT DISTINCT subpath FROM " + t + " WHERE project_key = $1 AND session_id = $2 AND subpath <> '' " +
			"ORDER BY subpath",
	}
	return s, nil
}

// Open connects to the database named by connString (a URL or key=value
// string, as [NewPool] takes it) and returns a Store on it, as
// [NewWithPool] does. Close closes the connection pool.
func Open(ctx context.Context, connString string, opts *Options) (*Store, error) {
	pool, err := NewPool(ctx, connString)
	if err != nil {
		return nil, err
	}
	s, err := makeStore(ctx, poolConns{pool}, opts)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.owned = pool
	return s, nil
}

// Close closes the connection pool if the Store was made by [Open]; a
// Store made by [NewWithPool] or [NewWithConns] leaves its pool to the
// caller.
func (s *Store) Close() {
	if s.owned != nil {
		s.owned.Close()
	}
}

// Table returns the quoted, possibly schema-qualified name of the table.
func (s *Store) Table() string { return s.table }

// migrate creates the table if it is missing and checks its version.
func (s *Store) migrate(ctx context.Context, id []string) error {
	name := id[len(id)-1]
	uuidIdx := quoteIdent(name + "_uuid")
	keyIdx := quoteIdent(name + "_key")
	t := s.table
	err := s.conns.WithConn(ctx, func(c *pgconn.PgConn) error {
		return inTx(ctx, c, func() error {
			// Serialize migrations of this table: concurrent CREATE TABLE IF
			// NOT EXISTS can fail on the catalog's unique indexes.
			if _, err := query(ctx, c, "SELECT pg_advisory_xact_lock(hashtext($1))", []any{"agentloop.session.store:" + t}, nil); err != nil {
				return err
			}
			rows, err := query(ctx, c, "SELECT to_regclass($1) IS NOT NULL, obj_description(to_regclass($1), 'pg_class')", []any{t}, nil)
			if err != nil {
				return err
			}
			if len(rows) != 1 || len(rows[0]) != 2 {
				return errors.New("unexpected answer to the table lookup")
			}
			if exists, got := string(rows[0][0]) == "t", rows[0][1]; exists {
				if got == nil || string(got) != comment() {
					desc := "no version"
					if got != nil {
						desc = fmt.Sprintf("%q", got)
					}
					return fmt.Errorf("%w: table %s has %s, want %q", ErrSchemaVersion, t, desc, comment())
				}
				return nil
			}
			for _, q := range []string{
				"CREATE TABLE IF NOT EXISTS " + t + ` (
				seq         bigserial   PRIMARY KEY,
				project_key text        NOT NULL,
				session_id  text        NOT NULL,
				subpath     text        NOT NULL DEFAULT '',
				uuid        text,
				entry       bytea       NOT NULL,
				created_at  timestamptz NOT NULL DEFAULT now()
			)`,
				"CREATE UNIQUE INDEX IF NOT EXISTS " + uuidIdx + " ON " + t + " (project_key, session_id, subpath, uuid) WHERE uuid IS NOT NULL",
				"CREATE INDEX IF NOT EXISTS " + keyIdx + " ON " + t + " (project_key, session_id, subpath, seq)",
				"COMMENT ON TABLE " + t + " IS '" + comment() + "'",
			} {
				if _, err := query(ctx, c, q, nil, nil); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		if errors.Is(err, ErrSchemaVersion) {
			return err
		}
		return fmt.Errorf("postgres: create table %s: %w", t, err)
	}
	return nil
}

// inTx runs f in a transaction on c: committed if f succeeds, rolled back
// if not.
func inTx(ctx context.Context, c *pgconn.PgConn, f func() error) error {
	if err := c.Exec(ctx, "BEGIN").Close(); err != nil {
		return err
	}
	if err := f(); err != nil {
		// A failed rollback leaves the connection in a transaction: the
		// pool closes it rather than reuse it.
		_ = c.Exec(ctx, "ROLLBACK").Close()
		return err
	}
	return c.Exec(ctx, "COMMIT").Close()
}

func keyString(k session.Key) string {
	if k.Subpath == "" {
		return k.ProjectKey + "/" + k.SessionID
	}
	return k.ProjectKey + "/" + k.SessionID + "/" + k.Subpath
}

// maxAttempts bounds the retries of an append aborted by a deadlock or a
// serialization failure (two batches racing on the same uuids).
const maxAttempts = 5

// Append implements session.Store: entries are added in order in one
// transaction; an entry whose uuid the transcript holds is skipped.
func (s *Store) Append(ctx context.Context, key session.Key, entries []session.Entry) error {
	if err := key.Validate(); err != nil {
		return fmt.Errorf("postgres: append: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("postgres: append %s: %w", keyString(key), err)
	}
	if len(entries) == 0 {
		return nil
	}
	rows := make([][][]byte, len(entries))
	for i, e := range entries {
		data, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("postgres: append %s: entry %d: %w", keyString(key), i, err)
		}
		var uuid []byte // NULL
		if e.UUID != "" {
			uuid = []byte(e.UUID)
		}
		rows[i] = [][]byte{[]byte(key.ProjectKey), []byte(key.SessionID), []byte(key.Subpath), uuid, data}
	}
	// The entry (a bytea) goes as binary, the rest as text.
	formats := []int16{0, 0, 0, 0, 1}
	var err error
	for attempt := 1; ; attempt++ {
		// One round trip; the batch's statements run in one implicit
		// transaction, so watchers hear of the entries at commit
		// (watch.go).
		b := &pgconn.Batch{}
		for _, r := range rows {
			b.ExecParams(s.q.insert, r, nil, formats, nil)
		}
		b.ExecParams("SELECT pg_notify($1, '')", [][]byte{[]byte(s.channel(key))}, nil, nil, nil)
		err = s.conns.WithConn(ctx, func(c *pgconn.PgConn) error {
			results, err := c.ExecBatch(ctx, b).ReadAll()
			if err != nil {
				return err
			}
			for _, r := range results {
				if r.Err != nil {
					return r.Err
				}
			}
			return nil
		})
		if err == nil || attempt == maxAttempts || !retryable(err) {
			break
		}
		t := time.NewTimer(time.Duration(attempt) * 10 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("postgres: append %s: %w", keyString(key), ctx.Err())
		case <-t.C:
		}
	}
	if err != nil {
		return fmt.Errorf("postgres: append %s: %w", keyString(key), err)
	}
	return nil
}

func retryable(err error) bool {
	var pe *pgconn.PgError
	// 40001 serialization_failure, 40P01 deadlock_detected
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// Load implements session.Store. It returns nil, nil for a key never
// written.
func (s *Store) Load(ctx context.Context, key session.Key) ([]session.Entry, error) {
	if err := key.Validate(); err != nil {
		return nil, fmt.Errorf("postgres: load: %w", err)
	}
	return s.load(ctx, key, s.q.load, 0)
}

// load reads the entries sql selects (the load query, maybe with an
// offset as $4); from numbers them in errors.
func (s *Store) load(ctx context.Context, key session.Key, sql string, from int, args ...any) ([]session.Entry, error) {
	args = append([]any{key.ProjectKey, key.SessionID, key.Subpath}, args...)
	rows, err := s.query(ctx, sql, args, binaryResults)
	if err != nil {
		return nil, fmt.Errorf("postgres: load %s: %w", keyString(key), err)
	}
	var out []session.Entry
	for _, r := range rows {
		var e session.Entry
		if err := json.Unmarshal(r[0], &e); err != nil {
			return nil, fmt.Errorf("postgres: load %s: entry %d: %w", keyString(key), from+len(out), err)
		}
		out = append(out, e)
	}
	return out, nil
}

// binaryResults asks for every result column in binary: a bytea as its
// bytes.
var binaryResults = []int16{1}

func (s *Store) query(ctx context.Context, sql string, args []any, resultFormats []int16) ([][][]byte, error) {
	var rows [][][]byte
	err := s.conns.WithConn(ctx, func(c *pgconn.PgConn) error {
		var err error
		rows, err = query(ctx, c, sql, args, resultFormats)
		return err
	})
	return rows, err
}

// List implements session.Store. Sessions are sorted most recently
// written first; ModTime has millisecond precision.
func (s *Store) List(ctx context.Context, projectKey string) ([]session.StoreSession, error) {
	rows, err := s.query(ctx, s.q.list, []any{projectKey}, nil)
	if err != nil {
		return nil, fmt.Errorf("postgres: list %s: %w", projectKey, err)
	}
	out := make([]session.StoreSession, 0, len(rows))
	for _, r := range rows {
		ms, err := strconv.ParseInt(string(r[1]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("postgres: list %s: time %q: %w", projectKey, r[1], err)
		}
		out = append(out, session.StoreSession{SessionID: string(r[0]), ModTime: time.UnixMilli(ms)})
	}
	return out, nil
}

// Delete implements session.Store. Deleting a main transcript (Subpath
// "") deletes its sub-transcripts too.
func (s *Store) Delete(ctx context.Context, key session.Key) error {
	if err := key.Validate(); err != nil {
		return fmt.Errorf("postgres: delete: %w", err)
	}
	var err error
	if key.Subpath == "" {
		_, err = s.query(ctx, s.q.deleteAll, []any{key.ProjectKey, key.SessionID}, nil)
	} else {
		_, err = s.query(ctx, s.q.deleteOne, []any{key.ProjectKey, key.SessionID, key.Subpath}, nil)
	}
	if err != nil {
		return fmt.Errorf("postgres: delete %s: %w", keyString(key), err)
	}
	return nil
}

// ListSubkeys implements session.Store. Subpaths are sorted.
func (s *Store) ListSubkeys(ctx context.Context, projectKey, sessionID string) ([]string, error) {
	k := session.Key{ProjectKey: projectKey, SessionID: sessionID}
	if err := k.Validate(); err != nil {
		return nil, fmt.Errorf("postgres: list subkeys: %w", err)
	}
	rows, err := s.query(ctx, s.q.subkeys, []any{projectKey, sessionID}, nil)
	if err != nil {
		return nil, fmt.Errorf("postgres: list subkeys %s: %w", keyString(k), err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = string(r[0])
	}
	return out, nil
}
