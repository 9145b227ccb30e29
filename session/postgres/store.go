package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentloop/agentloop/session"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultTable is the table a Store uses unless [Options.Table] is set.
const DefaultTable = "agentloop_session_entries"

// SchemaVersion is the version of the table layout this package writes;
// New records it in the table's comment as "agentloop session store v<N>".
const SchemaVersion = 1

// ErrSchemaVersion is returned by [New] when the table exists but was not
// created by this version of the package.
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
	pool   *pgxpool.Pool
	owned  bool // Close closes pool
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
func parseTable(name string) (pgx.Identifier, error) {
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
	return pgx.Identifier(parts), nil
}

func comment() string { return fmt.Sprintf("agentloop session store v%d", SchemaVersion) }

// New returns a Store keeping entries in a table of the database pool
// connects to, creating the table and its indexes if they are missing.
// The caller keeps ownership of pool: Close does not close it.
func New(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*Store, error) {
	if pool == nil {
		return nil, errors.New("postgres: nil pool")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	id, err := parseTable(o.Table)
	if err != nil {
		return nil, err
	}
	s := &Store{pool: pool, table: id.Sanitize()}
	if err := s.migrate(ctx, id); err != nil {
		return nil, err
	}
	t := s.table
	s.q = queries{
		insert: "INSERT INTO " + t + " (project_key, session_id, subpath, uuid, entry) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
		load:   "SELECT entry FROM " + t + " WHERE project_key = $1 AND session_id = $2 AND subpath = $3 ORDER BY seq",
		list: "SELECT session_id, max(created_at) FROM " + t + " WHERE project_key = $1 AND subpath = '' " +
			"GROUP BY session_id ORDER BY 2 DESC, 1",
		deleteOne: "DELETE FROM " + t + " WHERE project_key = $1 AND session_id = $2 AND subpath = $3",
		deleteAll: "DELETE FROM " + t + " WHERE project_key = $1 AND session_id = $2",
		subkeys: "SELECT DISTINCT subpath FROM " + t + " WHERE project_key = $1 AND session_id = $2 AND subpath <> '' " +
			"ORDER BY subpath",
	}
	return s, nil
}

// Open connects to the database named by connString (a URL or key=value
// string as pgxpool.ParseConfig accepts) and returns a Store on it, as
// [New] does. Close closes the connection pool.
func Open(ctx context.Context, connString string, opts *Options) (*Store, error) {
	pool, err := pgxpool.New(ctx, connString)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	s, err := New(ctx, pool, opts)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// Close closes the connection pool if the Store was made by [Open]; a
// Store made by [New] leaves its pool to the caller.
func (s *Store) Close() {
	if s.owned {
		s.pool.Close()
	}
}

// Table returns the quoted, possibly schema-qualified name of the table.
func (s *Store) Table() string { return s.table }

// migrate creates the table if it is missing and checks its version.
func (s *Store) migrate(ctx context.Context, id pgx.Identifier) error {
	name := id[len(id)-1]
	uuidIdx := pgx.Identifier{name + "_uuid"}.Sanitize()
	keyIdx := pgx.Identifier{name + "_key"}.Sanitize()
	t := s.table
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Serialize migrations of this table: concurrent CREATE TABLE IF
		// NOT EXISTS can fail on the catalog's unique indexes.
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "agentloop.session.store:"+t); err != nil {
			return err
		}
		var exists bool
		var got *string
		if err := tx.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL, obj_description(to_regclass($1), 'pg_class')", t).Scan(&exists, &got); err != nil {
			return err
		}
		if exists {
			if got == nil || *got != comment() {
				desc := "no version"
				if got != nil {
					desc = fmt.Sprintf("%q", *got)
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
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrSchemaVersion) {
			return err
		}
		return fmt.Errorf("postgres: create table %s: %w", t, err)
	}
	return nil
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
	rows := make([][]any, len(entries))
	for i, e := range entries {
		data, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("postgres: append %s: entry %d: %w", keyString(key), i, err)
		}
		var uuid *string
		if e.UUID != "" {
			uuid = &e.UUID
		}
		rows[i] = []any{key.ProjectKey, key.SessionID, key.Subpath, uuid, data}
	}
	var err error
	for attempt := 1; ; attempt++ {
		b := &pgx.Batch{}
		for _, r := range rows {
			b.Queue(s.q.insert, r...)
		}
		// Watchers hear of the entries at commit (watch.go).
		b.Queue("SELECT pg_notify($1, '')", s.channel(key))
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			return tx.SendBatch(ctx, b).Close()
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
	rows, err := s.pool.Query(ctx, s.q.load, key.ProjectKey, key.SessionID, key.Subpath)
	if err != nil {
		return nil, fmt.Errorf("postgres: load %s: %w", keyString(key), err)
	}
	defer rows.Close()
	var out []session.Entry
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("postgres: load %s: %w", keyString(key), err)
		}
		var e session.Entry
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, fmt.Errorf("postgres: load %s: entry %d: %w", keyString(key), len(out), err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: load %s: %w", keyString(key), err)
	}
	return out, nil
}

// List implements session.Store. Sessions are sorted most recently
// written first; ModTime has millisecond precision.
func (s *Store) List(ctx context.Context, projectKey string) ([]session.StoreSession, error) {
	rows, err := s.pool.Query(ctx, s.q.list, projectKey)
	if err != nil {
		return nil, fmt.Errorf("postgres: list %s: %w", projectKey, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (session.StoreSession, error) {
		var ss session.StoreSession
		var mtime time.Time
		err := r.Scan(&ss.SessionID, &mtime)
		ss.ModTime = time.UnixMilli(mtime.UnixMilli())
		return ss, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list %s: %w", projectKey, err)
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
		_, err = s.pool.Exec(ctx, s.q.deleteAll, key.ProjectKey, key.SessionID)
	} else {
		_, err = s.pool.Exec(ctx, s.q.deleteOne, key.ProjectKey, key.SessionID, key.Subpath)
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
	rows, err := s.pool.Query(ctx, s.q.subkeys, projectKey, sessionID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list subkeys %s: %w", keyString(k), err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: list subkeys %s: %w", keyString(k), err)
	}
	return out, nil
}
