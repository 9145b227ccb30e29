package redis

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentloop/agentloop/session"
)

var _ session.Watcher = (*Store)(nil)

// notifyChannel is the pub/sub channel Append publishes on for key.
func (s *Store) notifyChannel(key session.Key) string {
	return s.prefix + "n:" + s.keys(key.ProjectKey, key.SessionID, key.Subpath).list
}

// Watch implements [session.Watcher] with Redis pub/sub: Append publishes
// on the transcript's channel once the entries are stored. Each watch
// holds a pub/sub connection of its own until its context ends.
func (s *Store) Watch(ctx context.Context, key session.Key) (<-chan struct{}, error) {
	if err := key.Validate(); err != nil {
		return nil, fmt.Errorf("redis: watch %s: %w", name(key), err)
	}
	notices, stop, err := s.b.Subscribe(ctx, s.notifyChannel(key))
	if err != nil {
		return nil, fmt.Errorf("redis: watch %s: %w", name(key), err)
	}
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		defer stop()
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-notices:
				if !ok {
					return
				}
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	return out, nil
}

// LoadFrom implements [session.Watcher]: LRANGE from index from.
func (s *Store) LoadFrom(ctx context.Context, key session.Key, from int) ([]session.Entry, error) {
	if err := key.Validate(); err != nil {
		return nil, fmt.Errorf("redis: load %s: %w", name(key), err)
	}
	k := s.keys(key.ProjectKey, key.SessionID, key.Subpath)
	lines, err := s.b.LRange(ctx, k.list, int64(max(from, 0)))
	if err != nil {
		return nil, fmt.Errorf("redis: load %s: %w", name(key), err)
	}
	if len(lines) == 0 {
		return nil, nil
	}
	out := make([]session.Entry, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &out[i]); err != nil {
			return nil, fmt.Errorf("redis: load %s: entry %d: %w", name(key), from+i, err)
		}
	}
	return out, nil
}
