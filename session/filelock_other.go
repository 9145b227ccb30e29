//go:build !unix

package session

import (
	"context"
	"os"
)

// lockFile does nothing where advisory file locks are not available: a
// FileStore then serialises only its own calls, and two instances on one
// directory may store a uuid twice when they race.
func lockFile(ctx context.Context, f *os.File, exclusive bool) error { return ctx.Err() }
