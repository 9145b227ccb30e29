// Package postgres is a [session.Store] kept in PostgreSQL, so that any
// host with access to the database can resume a session another host
// started.
//
// # Using it
//
// Open a store (or build one on a [Pool] you share with [NewWithPool]) and
// pass it as the loop's session store:
//
//	store, err := postgres.Open(ctx, "postgres://app@db.internal/app", nil)
//	if err != nil {
//		return err
//	}
//	defer store.Close()
//	opts := &agentloop.Options{SessionStore: store}
//	for msg, err := range agentloop.Query(ctx, "Fix the failing test", opts) {
//		...
//	}
//
// The loop still writes each transcript to the local disk and mirrors every
// batch of entries to the store; resuming a session on a host without the
// local file restores it from the store first (see [session.Mirror] and
// [session.Restore]).
//
// # Schema
//
// A new Store creates the table if it is missing (the default name is
// agentloop_session_entries; [Options.Table] changes it) together with its
// indexes, and marks it with a schema version in the table comment. A table
// that exists with another version, or that agentloop did not create, is
// refused with [ErrSchemaVersion]. The table holds one row per entry:
//
//	CREATE TABLE agentloop_session_entries (
//		seq         bigserial   PRIMARY KEY,        -- append order
//		project_key text        NOT NULL,
//		session_id  text        NOT NULL,
//		subpath     text        NOT NULL DEFAULT '', -- '' is the main transcript
//		uuid        text,                            -- idempotency key, may be NULL
//		entry       bytea       NOT NULL,            -- the entry's JSON
//		created_at  timestamptz NOT NULL DEFAULT now()
//	);
//	CREATE UNIQUE INDEX agentloop_session_entries_uuid
//		ON agentloop_session_entries (project_key, session_id, subpath, uuid)
//		WHERE uuid IS NOT NULL;
//	CREATE INDEX agentloop_session_entries_key
//		ON agentloop_session_entries (project_key, session_id, subpath, seq);
//
// The entry column keeps the JSON byte for byte, as the transcript line the
// reference CLI would write (jsonb would reject strings holding U+0000);
// convert_from(entry, 'UTF8')::jsonb makes it queryable in SQL.
//
// Append writes a batch in one transaction; an entry whose uuid the
// transcript already holds is skipped (ON CONFLICT DO NOTHING), so retried
// batches are harmless. Load returns entries in seq order. List reports the
// sessions of a project that have a main transcript, with the time of
// their last write. Deleting a main transcript deletes its sub-transcripts.
//
// A Store is safe for concurrent use, also by many processes sharing one
// table.
//
// # Connections
//
// The package talks to PostgreSQL through pgconn, pgx's wire protocol
// layer, and does not import the rest of pgx, whose type system is most
// of its size. A program that already holds a pgxpool.Pool builds its
// Store on it with package pgxstore; other pools can lend their
// connections through [Conns] and [NewWithConns].
package postgres
