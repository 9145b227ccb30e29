// Package redis is a [session.Store] that keeps transcripts in Redis, so
// that a session written on one host can be resumed on another.
//
// # Using it
//
// Let the store connect to one server by URL, through a small pool of
// its own ([Open], on redigo, which costs a program a tenth of what
// go-redis does):
//
//	store, err := redis.Open(ctx, "redis://127.0.0.1:6379/0", &redis.Options{TTL: 30 * 24 * time.Hour})
//
// or, to go through a go-redis client (a single node, Sentinel or
// Cluster client), build it with package goredisstore:
//
//	client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379"})
//	store, err := goredisstore.New(client, &redis.Options{TTL: 30 * 24 * time.Hour})
//
// That constructor lives in a package of its own so that this one does
// not depend on go-redis: a program that only calls Open neither links
// nor downloads it. Another client can serve a Store through [Backend].
//
// Then pass the store as agentloop's Options.SessionStore: the loop still
// writes the transcript locally and mirrors every batch to Redis, and a
// resume on a host without the local file restores it from Redis.
//
//	opts := agentloop.Options{SessionStore: store}
//
// The Store is safe for concurrent use by many goroutines and many hosts.
// Append is atomic per batch and idempotent on entry uuids, also when
// several appenders write the same transcript at once: it runs as one Lua
// script on the server.
//
// # Key layout
//
// With the default prefix "agentloop:", a project P and a session S:
//
//	agentloop:s:{P}:S:          list of the main transcript's entries (JSON, in order)
//	agentloop:s:{P}:S:<subpath> list of a sub-transcript's entries
//	agentloop:u:{P}:S:<subpath> set of the uuids the transcript holds ("" subpath for main)
//	agentloop:k:{P}:S           set of the session's subpaths
//	agentloop:p:{P}             sorted set of the project's sessions, scored by mtime (Unix ms)
//
// P and S are percent-encoded: '%', ':', '{' and '}' become %25, %3A, %7B
// and %7D, so a ':' in a project key cannot make two keys collide. The
// subpath is the last part of a key and kept verbatim. The braces make
// {P} a Redis Cluster hash tag: all keys of a project live in one slot,
// which the Lua scripts need. The mtime is the server's clock
// (Redis TIME), so hosts with skewed clocks agree on it.
//
// With Options.TTL set, every write gives the keys it touches that TTL
// (PEXPIRE): an idle session expires as a whole. List and ListSubkeys
// leave out transcripts whose entries have expired.
package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	neturl "net/url"
	"slices"
	"strings"
	"time"

	"github.com/agentloop/agentloop/session"
)

// Options configure a [Store].
type Options struct {
	// Prefix starts every key the store writes; "" means "agentloop:".
	Prefix string
	// TTL, when positive, is set on every key a write touches, so that
	// transcripts expire that long after their last write. Zero keeps
	// them forever.
	TTL time.Duration
}

// Store is a [session.Store] in Redis. Create it with [Open] or
// [NewWithBackend].
type Store struct {
	b      Backend
	close  func() error // Open's pool's; nil for NewWithBackend
	prefix string
	ttl    time.Duration
}

var _ session.Store = (*Store)(nil)

// NewWithBackend returns a Store that sends its commands through b.
// opts may be nil. The Store does not close b.
func NewWithBackend(b Backend, opts *Options) (*Store, error) {
	if b == nil {
		return nil, errors.New("redis: nil Backend")
	}
	return makeStore(b, opts), nil
}

// Open returns a Store on the Redis server of url (redis:// or rediss://,
// with an optional user and password and a database number as the path:
// "redis://user:secret@host:6379/2"), through a pool of connections of
// its own (up to 8 idle), and checks that the server answers. Each watch
// holds a connection of its own. Close closes the pool.
func Open(ctx context.Context, url string, opts *Options) (*Store, error) {
	if err := checkOpenURL(url); err != nil {
		return nil, err
	}
	b := newRedigoBackend(url)
	if _, err := b.do(ctx, "PING"); err != nil {
		_ = b.close()
		return nil, fmt.Errorf("redis: open: %w", err)
	}
	s := makeStore(b, opts)
	s.close = b.close
	return s, nil
}

// checkOpenURL refuses what Open would otherwise drop in silence: the
// query options a go-redis URL may carry (dial_timeout, pool_size, …),
// which the connections Open makes do not take.
func checkOpenURL(raw string) error {
	u, err := neturl.Parse(raw)
	if err != nil {
		return fmt.Errorf("redis: open: the URL: %w", err)
	}
	if u.RawQuery == "" {
		return nil
	}
	keys := make([]string, 0)
	for k := range u.Query() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return fmt.Errorf("redis: open: the URL's options (%s) are not supported by Open; remove them, "+
		"or make a go-redis client with them and pass it to goredisstore.New", strings.Join(keys, ", "))
}

// Close closes the connection pool of a Store made by [Open]; a Store made
// by [NewWithBackend] leaves its backend to the caller.
func (s *Store) Close() error {
	if s.close == nil {
		return nil
	}
	if err := s.close(); err != nil {
		return fmt.Errorf("redis: close: %w", err)
	}
	return nil
}

func makeStore(b Backend, opts *Options) *Store {
	s := &Store{b: b, prefix: "agentloop:"}
	if opts != nil {
		if opts.Prefix != "" {
			s.prefix = opts.Prefix
		}
		s.ttl = opts.TTL
	}
	return s
}

// escape percent-encodes the bytes of a key part that would let parts
// collide or break the hash tag.
func escape(s string) string {
	if !strings.ContainsAny(s, "%:{}") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '%', ':', '{', '}':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// keys names the Redis keys of one transcript.
type keys struct {
	list, uuids, project, subkeys string
	// subList and subUUIDs prefix the keys of the session's
	// sub-transcripts: append a subpath.
	subList, subUUIDs string
}

func (s *Store) keys(projectKey, sessionID, subpath string) keys {
	p := "{" + escape(projectKey) + "}"
	ps := p + ":" + escape(sessionID)
	return keys{
		list:     s.prefix + "s:" + ps + ":" + subpath,
		uuids:    s.prefix + "u:" + ps + ":" + subpath,
		project:  s.prefix + "p:" + p,
		subkeys:  s.prefix + "k:" + ps,
		subList:  s.prefix + "s:" + ps + ":",
		subUUIDs: s.prefix + "u:" + ps + ":",
	}
}

func name(k session.Key) string {
	if k.Subpath == "" {
		return k.ProjectKey + "/" + k.SessionID
	}
	return k.ProjectKey + "/" + k.SessionID + "/" + k.Subpath
}

// appendScript adds the entries of one batch.
//
// KEYS: list, uuids, project, subkeys. ARGV: ttl ms, session id, subpath,
// then uuid and JSON of each entry.
const appendScript = `
local n = 0
for i = 4, #ARGV, 2 do
  local id = ARGV[i]
  if id == '' or redis.call('SADD', KEYS[2], id) == 1 then
    redis.call('RPUSH', KEYS[1], ARGV[i + 1])
    n = n + 1
  end
end
if ARGV[3] == '' then
  local t = redis.call('TIME')
  local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZADD', KEYS[3], ms, ARGV[2])
else
  redis.call('SADD', KEYS[4], ARGV[3])
end
local ttl = tonumber(ARGV[1])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
  redis.call('PEXPIRE', KEYS[4], ttl)
  if ARGV[3] == '' then
    redis.call('PEXPIRE', KEYS[3], ttl)
  end
end
return n
`

// deleteScript removes a transcript, and with the main one the session.
//
// KEYS: list, uuids, project, subkeys. ARGV: subpath, session id, prefix
// of sub-transcript lists, prefix of sub-transcript uuid sets.
const deleteScript = `
redis.call('DEL', KEYS[1], KEYS[2])
if ARGV[1] == '' then
  for _, sub in ipairs(redis.call('SMEMBERS', KEYS[4])) do
    redis.call('DEL', ARGV[3] .. sub, ARGV[4] .. sub)
  end
  redis.call('DEL', KEYS[4])
  redis.call('ZREM', KEYS[3], ARGV[2])
else
  redis.call('SREM', KEYS[4], ARGV[1])
end
return 0
`

// Append implements [session.Store]. The batch is stored atomically;
// entries whose uuid the transcript holds are skipped.
func (s *Store) Append(ctx context.Context, key session.Key, entries []session.Entry) error {
	if err := key.Validate(); err != nil {
		return fmt.Errorf("redis: append %s: %w", name(key), err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redis: append %s: %w", name(key), err)
	}
	if len(entries) == 0 {
		return nil
	}
	k := s.keys(key.ProjectKey, key.SessionID, key.Subpath)
	args := make([]any, 0, 3+2*len(entries))
	args = append(args, s.ttlMillis(), key.SessionID, key.Subpath)
	for i, e := range entries {
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("redis: append %s: entry %d: %w", name(key), i, err)
		}
		args = append(args, e.UUID, b)
	}
	_, err := s.b.Eval(ctx, appendScript, []string{k.list, k.uuids, k.project, k.subkeys}, args...)
	if err != nil {
		return fmt.Errorf("redis: append %s: %w", name(key), err)
	}
	// Watchers (watch.go) read the tail; a lost notice only delays them
	// until their next read.
	_ = s.b.Publish(ctx, s.notifyChannel(key))
	return nil
}

// Load implements [session.Store]. It returns nil, nil for a transcript
// never written (or deleted, or expired).
func (s *Store) Load(ctx context.Context, key session.Key) ([]session.Entry, error) {
	if err := key.Validate(); err != nil {
		return nil, fmt.Errorf("redis: load %s: %w", name(key), err)
	}
	k := s.keys(key.ProjectKey, key.SessionID, key.Subpath)
	lines, err := s.b.LRange(ctx, k.list, 0)
	if err != nil {
		return nil, fmt.Errorf("redis: load %s: %w", name(key), err)
	}
	if len(lines) == 0 {
		return nil, nil
	}
	out := make([]session.Entry, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &out[i]); err != nil {
			return nil, fmt.Errorf("redis: load %s: entry %d: %w", name(key), i, err)
		}
	}
	return out, nil
}

// List implements [session.Store]. Sessions are sorted most recent
// first, then by id.
func (s *Store) List(ctx context.Context, projectKey string) ([]session.StoreSession, error) {
	k := s.keys(projectKey, "", "")
	ids, scores, err := s.b.ZRangeWithScores(ctx, k.project)
	if err != nil {
		return nil, fmt.Errorf("redis: list %s: %w", projectKey, err)
	}
	if len(scores) != len(ids) {
		return nil, fmt.Errorf("redis: list %s: %d scores for %d sessions", projectKey, len(scores), len(ids))
	}
	live, err := s.live(ctx, ids, func(id string) string { return s.keys(projectKey, id, "").list })
	if err != nil {
		return nil, fmt.Errorf("redis: list %s: %w", projectKey, err)
	}
	var out []session.StoreSession
	for i, id := range ids {
		if live[i] {
			out = append(out, session.StoreSession{SessionID: id, ModTime: time.UnixMilli(int64(scores[i]))})
		}
	}
	slices.SortFunc(out, func(a, b session.StoreSession) int {
		if c := b.ModTime.Compare(a.ModTime); c != 0 {
			return c
		}
		return strings.Compare(a.SessionID, b.SessionID)
	})
	return out, nil
}

// ListSubkeys implements [session.Store]. Subpaths are sorted.
func (s *Store) ListSubkeys(ctx context.Context, projectKey, sessionID string) ([]string, error) {
	k := s.keys(projectKey, sessionID, "")
	subs, err := s.b.SMembers(ctx, k.subkeys)
	if err != nil {
		return nil, fmt.Errorf("redis: list subkeys %s/%s: %w", projectKey, sessionID, err)
	}
	live, err := s.live(ctx, subs, func(sub string) string { return k.subList + sub })
	if err != nil {
		return nil, fmt.Errorf("redis: list subkeys %s/%s: %w", projectKey, sessionID, err)
	}
	var out []string
	for i, sub := range subs {
		if live[i] {
			out = append(out, sub)
		}
	}
	slices.Sort(out)
	return out, nil
}

// live reports which of the transcripts named by parts still have
// entries. Without a TTL, the index sets are exact and all are live.
func (s *Store) live(ctx context.Context, parts []string, list func(string) string) ([]bool, error) {
	live := make([]bool, len(parts))
	if s.ttl <= 0 || len(parts) == 0 {
		for i := range live {
			live[i] = true
		}
		return live, nil
	}
	// The keys of one project share a hash slot, so one script reaches
	// one node also in a cluster.
	keys := make([]string, len(parts))
	for i, part := range parts {
		keys[i] = list(part)
	}
	reply, err := s.b.Eval(ctx, existsScript, keys)
	if err != nil {
		return nil, err
	}
	flags, err := int64s(reply)
	if err != nil {
		return nil, err
	}
	if len(flags) != len(parts) {
		return nil, fmt.Errorf("exists script returned %d answers for %d keys", len(flags), len(parts))
	}
	for i, f := range flags {
		live[i] = f > 0
	}
	return live, nil
}

// existsScript answers, for each of KEYS, 1 if it exists and 0 if not.
// (One script rather than a pipeline of EXISTS: a pipeline is a
// goredis.Pipeliner, whose hundreds of methods every binary calling
// Pipelined links.)
const existsScript = `
local r = {}
for i, k in ipairs(KEYS) do
  r[i] = redis.call('EXISTS', k)
end
return r
`

// Delete implements [session.Store]. Deleting a main transcript removes
// the session's sub-transcripts and its entry in List too.
func (s *Store) Delete(ctx context.Context, key session.Key) error {
	if err := key.Validate(); err != nil {
		return fmt.Errorf("redis: delete %s: %w", name(key), err)
	}
	k := s.keys(key.ProjectKey, key.SessionID, key.Subpath)
	_, err := s.b.Eval(ctx, deleteScript, []string{k.list, k.uuids, k.project, k.subkeys},
		key.Subpath, key.SessionID, k.subList, k.subUUIDs)
	if err != nil {
		return fmt.Errorf("redis: delete %s: %w", name(key), err)
	}
	return nil
}

// ttlMillis is the TTL in whole milliseconds, at least 1 when set.
func (s *Store) ttlMillis() int64 {
	if s.ttl <= 0 {
		return 0
	}
	return max(s.ttl.Milliseconds(), 1)
}
