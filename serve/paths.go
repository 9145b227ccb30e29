package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Limits of a requested working directory (the cwd of POST /v1/sessions),
// checked before anything is created: a deeper or longer one is refused
// with 400.
const (
	// MaxCwdDepth is the most path components a cwd may have below the
	// tenant's root.
	MaxCwdDepth = 32
	// MaxCwdBytes is the longest cwd, in bytes, as requested.
	MaxCwdBytes = 1024
	// MaxCwdNameBytes is the longest component of a cwd, in bytes (the
	// usual file-name limit).
	MaxCwdNameBytes = 255
)

// tenantRoot returns the directory under which a tenant's working
// directories live: Root/<h(tenant)>.
func (s *Server) tenantRoot(tenant string) string {
	return filepath.Join(s.root, "t-"+tenantHash(tenant))
}

// resolveCwd checks rel, a working directory relative to the tenant's
// root, and returns its absolute path without creating anything. rel must
// be relative, must not climb out with "..", and must not leave the root
// through a symbolic link; and it must stay within MaxCwdBytes,
// MaxCwdDepth and MaxCwdNameBytes.
func (s *Server) resolveCwd(tenant, rel string) (string, error) {
	if rel == "" {
		return "", errors.New("cwd is empty")
	}
	if len(rel) > MaxCwdBytes {
		return "", fmt.Errorf("cwd is %d bytes long; at most %d are allowed", len(rel), MaxCwdBytes)
	}
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`) || filepath.VolumeName(rel) != "" {
		return "", fmt.Errorf("cwd %q must be a path relative to the session root, not an absolute path", rel)
	}
	if strings.ContainsRune(rel, 0) {
		return "", fmt.Errorf("cwd %q contains a NUL byte", rel)
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("cwd %q leaves the session root", rel)
	}
	if clean != "." {
		els := strings.Split(clean, string(filepath.Separator))
		if len(els) > MaxCwdDepth {
			return "", fmt.Errorf("cwd has %d path components; at most %d are allowed", len(els), MaxCwdDepth)
		}
		for _, el := range els {
			if len(el) > MaxCwdNameBytes {
				return "", fmt.Errorf("cwd has a path component of %d bytes (%.40q…); at most %d are allowed", len(el), el, MaxCwdNameBytes)
			}
		}
	}
	for _, el := range strings.Split(filepath.ToSlash(rel), "/") {
		if el == ".." {
			return "", fmt.Errorf("cwd %q must not contain \"..\"", rel)
		}
	}
	root := s.tenantRoot(tenant)
	abs := filepath.Join(root, clean)
	// Every existing prefix must resolve inside the root: a symbolic link
	// anywhere on the way could lead out.
	realRoot, err := filepath.EvalSymlinks(s.root)
	if err != nil {
		return "", fmt.Errorf("session root %s: %w", s.root, err)
	}
	realRoot = filepath.Join(realRoot, filepath.Base(root))
	p := root
	for _, el := range strings.Split(clean, string(filepath.Separator)) {
		if el == "." {
			continue
		}
		p = filepath.Join(p, el)
		real, err := filepath.EvalSymlinks(p)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("cwd %q: %w", rel, err)
		}
		if real != realRoot && !strings.HasPrefix(real, realRoot+string(filepath.Separator)) {
			return "", fmt.Errorf("cwd %q leaves the session root through a symbolic link", rel)
		}
		if fi, err := os.Stat(real); err == nil && !fi.IsDir() {
			return "", fmt.Errorf("cwd %q is not a directory", rel)
		}
	}
	return abs, nil
}

// makeCwd creates the checked working directory abs (and the tenant's root).
func makeCwd(abs string) error {
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fmt.Errorf("creating the working directory: %w", err)
	}
	return nil
}
