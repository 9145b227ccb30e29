package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// tenantRoot returns the directory under which a tenant's working
// directories live: Root/<h(tenant)>.
func (s *Server) tenantRoot(tenant string) string {
	return filepath.Join(s.root, "t-"+tenantHash(tenant))
}

// resolveCwd checks rel, a working directory relative to the tenant's
// root, and returns its absolute path without creating anything. rel must
// be relative, must not climb out with "..", and must not leave the root
// through a symbolic link.
func (s *Server) resolveCwd(tenant, rel string) (string, error) {
	if rel == "" {
		return "", errors.New("cwd is empty")
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
