// Package nofollow opens files and directories one path component at a
// time, with openat and O_NOFOLLOW from "/", so that no symbolic link is
// ever followed: a link swapped in on the way or at the end, after a path
// was checked, makes the operation fail with ErrLink instead of reaching
// another file. The file tools and the file checkpoints use it.
//
// It works on Unix systems only; elsewhere the package has only NoLinks,
// which cannot tell there, and its callers fall back to what they can
// promise. On Linux a path without links is opened or checked in one
// openat2 call (RESOLVE_NO_SYMLINKS) rather than a call per component.
package nofollow

import "errors"

// ErrLink is the cause reported when a symbolic link stands where the
// checked path had a directory or the file itself.
var ErrLink = errors.New("a symbolic link now stands on the path that was checked, so the file was not touched (the path changed after the permission check; look at it and try again)")
