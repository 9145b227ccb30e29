package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/agentloop/agentloop/session/postgres"
)

// Tenant is who a bearer token acts for. Sessions belong to one tenant;
// a tenant sees and drives only its own.
type Tenant struct {
	// ID names the tenant; it is stored in its sessions' records.
	ID string `json:"tenant"`
	// MaxConcurrent bounds the tenant's sessions that hold a running
	// client on one replica at a time; 0 means no limit.
	MaxConcurrent int `json:"max_concurrent,omitempty"`
	// DailyBudgetUSD bounds what the tenant's turns cost per UTC day,
	// across replicas (the spend is kept in the store); 0 means no limit.
	// A turn that starts under the budget may end over it.
	DailyBudgetUSD float64 `json:"daily_budget_usd,omitempty"`
}

// ErrUnknownToken is returned by a TenantStore for a token it does not know.
var ErrUnknownToken = errors.New("serve: unknown token")

// TenantStore maps tokens to tenants. Tokens are never stored: only their
// [HashToken], the hex SHA-256 of the token. Implementations must be safe
// for concurrent use.
type TenantStore interface {
	// Lookup returns the tenant of the token whose hash is tokenHash, or
	// an error wrapping ErrUnknownToken.
	Lookup(ctx context.Context, tokenHash string) (Tenant, error)
}

// HashToken returns the hex SHA-256 of token, the form in which a
// TenantStore keeps it.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// MemoryTenants is a TenantStore in memory, keyed by token hash.
type MemoryTenants struct {
	mu sync.RWMutex
	m  map[string]Tenant
}

// NewMemoryTenants returns an empty MemoryTenants.
func NewMemoryTenants() *MemoryTenants { return &MemoryTenants{m: map[string]Tenant{}} }

// Add lets token act for t. The token itself is not kept, only its hash.
func (s *MemoryTenants) Add(token string, t Tenant) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[HashToken(token)] = t
}

// Lookup implements TenantStore.
func (s *MemoryTenants) Lookup(_ context.Context, tokenHash string) (Tenant, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.m[tokenHash]
	if !ok {
		return Tenant{}, ErrUnknownToken
	}
	return t, nil
}

// tokenFileEntry is one token of a tokens file.
type tokenFileEntry struct {
	SHA256 string `json:"sha256"`
	Tenant
}

// LoadTenantsFile reads a JSON tokens file:
//
//	{"tokens":[{"sha256":"<hex sha256 of the token>","tenant":"acme","max_concurrent":4,"daily_budget_usd":20}]}
//
// and returns it as a MemoryTenants. Unknown fields, a missing tenant or a
// hash that is not 64 hex digits are errors.
func LoadTenantsFile(path string) (*MemoryTenants, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("serve: reading tokens file: %w", err)
	}
	var f struct {
		Tokens []tokenFileEntry `json:"tokens"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("serve: tokens file %s: %w", path, err)
	}
	s := NewMemoryTenants()
	for i, e := range f.Tokens {
		h := strings.ToLower(e.SHA256)
		if b, err := hex.DecodeString(h); err != nil || len(b) != sha256.Size {
			return nil, fmt.Errorf("serve: tokens file %s: token %d: sha256 must be 64 hex digits", path, i)
		}
		if e.ID == "" {
			return nil, fmt.Errorf("serve: tokens file %s: token %d: no tenant", path, i)
		}
		s.m[h] = e.Tenant
	}
	return s, nil
}

// PostgresTenants is a TenantStore in a PostgreSQL table (default
// agentloop_serve_tokens) with columns token_sha256 (primary key), tenant,
// max_concurrent and daily_budget_usd. Its constructors create the table
// when it is missing; rows are managed with SQL. (Package pgxtenants makes
// one on a pgxpool.Pool.)
type PostgresTenants struct {
	db    TenantsDB
	table string // quoted
}

// TenantsDB runs the statements of a [PostgresTenants]. A
// *postgres.Pool is one; package pgxtenants wraps a pgxpool.Pool as one.
// It must be safe for concurrent use.
type TenantsDB interface {
	// Exec runs one statement with args ($1, $2, ...: strings, ints and
	// float64s).
	Exec(ctx context.Context, sql string, args ...any) error
	// Query runs one statement with args and returns its rows, each
	// value in PostgreSQL's text format and NULL as nil.
	Query(ctx context.Context, sql string, args ...any) ([][][]byte, error)
}

// NewPostgresTenantsPool returns a PostgresTenants on table (empty means
// agentloop_serve_tokens) of pool's database (the session store's pool,
// say), creating the table if needed.
func NewPostgresTenantsPool(ctx context.Context, pool *postgres.Pool, table string) (*PostgresTenants, error) {
	if pool == nil {
		return nil, errors.New("serve: nil postgres pool")
	}
	return NewPostgresTenantsDB(ctx, pool, table)
}

// NewPostgresTenantsDB is [NewPostgresTenantsPool] on any TenantsDB.
func NewPostgresTenantsDB(ctx context.Context, db TenantsDB, table string) (*PostgresTenants, error) {
	if db == nil {
		return nil, errors.New("serve: nil TenantsDB")
	}
	if table == "" {
		table = "agentloop_serve_tokens"
	}
	id := quoteIdent(table)
	err := db.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+id+` (
		token_sha256 text PRIMARY KEY,
		tenant text NOT NULL,
		max_concurrent integer NOT NULL DEFAULT 0,
		daily_budget_usd double precision NOT NULL DEFAULT 0)`)
	if err != nil {
		return nil, fmt.Errorf("serve: creating tokens table %s: %w", id, err)
	}
	return &PostgresTenants{db: db, table: id}, nil
}

// quoteIdent quotes an identifier as PostgreSQL reads it.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, "\x00", ""), `"`, `""`) + `"`
}

// Add inserts or replaces the row of token (stored as its hash).
func (p *PostgresTenants) Add(ctx context.Context, token string, t Tenant) error {
	err := p.db.Exec(ctx, `INSERT INTO `+p.table+` (token_sha256, tenant, max_concurrent, daily_budget_usd)
		VALUES ($1, $2, $3, $4) ON CONFLICT (token_sha256)
		DO UPDATE SET tenant = $2, max_concurrent = $3, daily_budget_usd = $4`,
		HashToken(token), t.ID, t.MaxConcurrent, t.DailyBudgetUSD)
	if err != nil {
		return fmt.Errorf("serve: adding a token: %w", err)
	}
	return nil
}

// Lookup implements TenantStore.
func (p *PostgresTenants) Lookup(ctx context.Context, tokenHash string) (Tenant, error) {
	rows, err := p.db.Query(ctx, `SELECT tenant, max_concurrent, daily_budget_usd FROM `+p.table+
		` WHERE token_sha256 = $1`, tokenHash)
	if err != nil {
		return Tenant{}, fmt.Errorf("serve: looking up a token: %w", err)
	}
	if len(rows) == 0 {
		return Tenant{}, ErrUnknownToken
	}
	t, err := tenantOfRow(rows[0])
	if err != nil {
		return Tenant{}, fmt.Errorf("serve: looking up a token: %w", err)
	}
	return t, nil
}

// tenantOfRow reads a row of tenant, max_concurrent and daily_budget_usd.
func tenantOfRow(r [][]byte) (Tenant, error) {
	if len(r) != 3 {
		return Tenant{}, fmt.Errorf("%d columns, want 3", len(r))
	}
	t := Tenant{ID: string(r[0])}
	var err error
	if t.MaxConcurrent, err = strconv.Atoi(string(r[1])); err != nil {
		return Tenant{}, fmt.Errorf("max_concurrent %q: %w", r[1], err)
	}
	if t.DailyBudgetUSD, err = strconv.ParseFloat(string(r[2]), 64); err != nil {
		return Tenant{}, fmt.Errorf("daily_budget_usd %q: %w", r[2], err)
	}
	return t, nil
}
