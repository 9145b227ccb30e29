package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/agentloop/agentloop/session"
)

// A tenant's concurrent sessions are counted across replicas.
//
// A tenant with MaxConcurrent n has n slots in the store, each a lease
// (session.AcquireLease) under Key{ProjectKey: "serve-slots-" + h(tenant),
// SessionID: "slot-<i>"}. A session takes a free slot when it opens on any
// replica, renews it with its own lease and releases it when it closes; a
// dead replica's slots expire with their leases. So the limit holds for
// the tenant as a whole, not per replica.

// slotKey is the key of a tenant's slot i.
func slotKey(tenant string, i int) session.Key {
	return session.Key{ProjectKey: "serve-slots-" + tenantHash(tenant), SessionID: fmt.Sprintf("slot-%d", i)}
}

// takeSlot takes a free slot of t, or answers 429 when all are held; nil
// and no error when t has no limit.
func (s *Server) takeSlot(ctx context.Context, t Tenant) (*session.Lease, error) {
	if t.MaxConcurrent <= 0 {
		return nil, nil
	}
	for i := range t.MaxConcurrent {
		l, err := session.AcquireLease(ctx, s.store, slotKey(t.ID, i), session.LeaseOptions{TTL: s.cfg.LeaseTTL})
		if errors.Is(err, session.ErrSessionBusy) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("serve: taking a concurrency slot of tenant %s: %w", t.ID, err)
		}
		return l, nil
	}
	return nil, &apiError{status: http.StatusTooManyRequests, typ: "limit",
		msg: fmt.Sprintf("tenant %s already has %d open sessions (its limit, across replicas); wait for one to go idle", t.ID, t.MaxConcurrent)}
}
