package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxGrants bounds the rules of one policy, so that a deny list over a
// huge directory cannot make a command's start arbitrarily slow.
const maxGrants = 4096

// grant is one Landlock rule to be: rights beneath path.
type grant struct {
	path   string
	dir    bool
	access uint64
}

// lister reads a directory: the names of its entries, and for each
// whether it is a directory and whether it is a symbolic link.
type lister func(dir string) ([]fs.DirEntry, error)

// resolveAll cleans and resolves the symbolic links of paths, dropping
// the ones that do not exist, and removing duplicates.
func resolveAll(paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		r, err := filepath.EvalSymlinks(filepath.Clean(p))
		if err != nil {
			continue
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// within reports whether path is root or lies beneath it. Both are clean
// and absolute.
func within(path, root string) bool {
	if root == "/" || path == root {
		return true
	}
	return strings.HasPrefix(path, root+"/")
}

// createRights are the rights to make a new entry in a directory that
// carve grants on a directory carved because a hole lies inside it: not
// the rights to remove, rename away or refer (move or link across
// directories), so that the entries already there, the holes among them,
// stay where they are. Devices are not among them.
const createRights = accessMakeReg | accessMakeDir | accessMakeSym | accessMakeFifo | accessMakeSock

// carve returns the trees that together cover root except every hole
// (and everything beneath a hole): root itself when no hole lies inside
// it, else the entries of root, each carved in turn. Symbolic links are
// skipped (access through one is judged at its target). Paths must be
// clean, absolute and resolved.
//
// A directory carved because holes lie inside it also gets the part of
// access in createRights, so that new entries can be made in it, but
// only when none of those holes is a directory: Landlock grants a
// directory's rights to everything beneath it, so a create right on an
// ancestor of a directory hole would let the command create (or plant a
// symbolic link) inside the hole. New entries made this way are not
// writable (no write right reaches them).
func carve(root string, rootIsDir bool, holes []string, list lister, out *[]grant, access uint64) error {
	var inside []string
	for _, h := range holes {
		if within(root, h) {
			return nil // root is (beneath) a hole
		}
		if within(h, root) {
			inside = append(inside, h)
		}
	}
	if len(inside) == 0 || !rootIsDir {
		if len(*out) >= maxGrants {
			return fmt.Errorf("sandbox: more than %d rules needed to carve out the denied paths", maxGrants)
		}
		*out = append(*out, grant{path: root, dir: rootIsDir, access: access})
		return nil
	}
	if create := access & createRights; create != 0 && !anyDir(inside) {
		if len(*out) >= maxGrants {
			return fmt.Errorf("sandbox: more than %d rules needed to carve out the denied paths", maxGrants)
		}
		*out = append(*out, grant{path: root, dir: true, access: create})
	}
	entries, err := list(root)
	if err != nil {
		return fmt.Errorf("sandbox: listing %s: %w", root, err)
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		if err := carve(filepath.Join(root, e.Name()), e.IsDir(), inside, list, out, access); err != nil {
			return err
		}
	}
	return nil
}

// anyDir reports whether one of paths is a directory, or cannot be told
// apart from one (it cannot be inspected).
func anyDir(paths []string) bool {
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil || fi.IsDir() {
			return true
		}
	}
	return false
}

// fsRights are the Landlock filesystem rights of one ABI version.
type fsRights struct {
	handled uint64 // every right this ABI can restrict
	read    uint64 // read and execute files, list directories
	write   uint64 // every way of changing a tree
	device  uint64 // writing to a device file such as /dev/null
}

// Landlock filesystem rights, as numbered by the kernel.
const (
	accessExecute    = 1 << 0
	accessWriteFile  = 1 << 1
	accessReadFile   = 1 << 2
	accessReadDir    = 1 << 3
	accessRemoveDir  = 1 << 4
	accessRemoveFile = 1 << 5
	accessMakeChar   = 1 << 6
	accessMakeDir    = 1 << 7
	accessMakeReg    = 1 << 8
	accessMakeSock   = 1 << 9
	accessMakeFifo   = 1 << 10
	accessMakeBlock  = 1 << 11
	accessMakeSym    = 1 << 12
	accessRefer      = 1 << 13 // ABI 2
	accessTruncate   = 1 << 14 // ABI 3
	accessIoctlDev   = 1 << 15 // ABI 5

	// fileRights are the rights a rule on a non-directory may carry.
	fileRights = accessExecute | accessWriteFile | accessReadFile | accessTruncate | accessIoctlDev
)

// rightsFor returns the filesystem rights of Landlock ABI abi (1 or
// more). IoctlDev is handled but granted nowhere: no sandboxed command
// may issue device ioctls on a device it opened (such as TIOCSTI on
// /dev/tty).
func rightsFor(abi int) fsRights {
	handled := uint64(accessMakeSym<<1 - 1)
	if abi >= 2 {
		handled |= accessRefer
	}
	if abi >= 3 {
		handled |= accessTruncate
	}
	if abi >= 5 {
		handled |= accessIoctlDev
	}
	read := uint64(accessExecute | accessReadFile | accessReadDir)
	return fsRights{
		handled: handled,
		read:    read,
		write:   handled &^ (read | accessIoctlDev),
		device:  handled & (accessWriteFile | accessTruncate),
	}
}

// deviceFiles are writable in every sandbox: commands redirect to them
// all the time.
var deviceFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// resolved returns a copy of p with its paths cleaned, their symbolic
// links resolved, and the paths that do not exist dropped (TempDir
// becomes "" then).
func (p *Policy) resolved() *Policy {
	r := *p
	r.WriteAllow = resolveAll(p.WriteAllow)
	r.WriteDeny = resolveAll(p.WriteDeny)
	r.ReadDeny = resolveAll(p.ReadDeny)
	r.ReadAllow = resolveAll(p.ReadAllow)
	// Protect paths may not exist: they are cleaned only, and
	// inspected where they are used (see inspectProtect).
	r.Protect = nil
	for _, path := range p.Protect {
		if path != "" {
			r.Protect = append(r.Protect, filepath.Clean(path))
		}
	}
	r.TempDir = ""
	if t := resolveAll([]string{p.TempDir}); len(t) == 1 {
		r.TempDir = t[0]
	}
	return &r
}

// grants computes the filesystem rules of p, which must be resolved (see
// resolved), for rights r, reading directories with list. holes are the
// resolved paths the write roots are carved around (see writeHoles): the
// denied paths that nothing else keeps read-only.
func (p *Policy) grants(r fsRights, list lister, holes []string) ([]grant, error) {
	var out []grant
	// Listing is allowed everywhere (see the package doc); everything
	// else that reads is carved around ReadDeny.
	out = append(out, grant{path: "/", dir: true, access: accessReadDir})
	if err := carve("/", true, p.ReadDeny, list, &out, r.read); err != nil {
		return nil, err
	}
	for _, a := range p.ReadAllow {
		out = append(out, grant{path: a, dir: isDir(a), access: r.read})
	}
	var roots []string
	if p.TempDir != "" {
		roots = append(roots, p.TempDir)
	}
	if !p.ReadOnly {
		roots = append(roots, p.WriteAllow...)
	}
	for _, root := range roots {
		if err := carve(root, isDir(root), p.holesFor(root, holes), list, &out, r.write); err != nil {
			return nil, err
		}
	}
	for _, d := range resolveAll(deviceFiles) {
		out = append(out, grant{path: d, access: r.device})
	}
	return out, nil
}

// holesFor returns the holes a write root is carved around: holes, less
// a ReadDeny tree the root lies in only through a ReadAllow tree inside
// it. Reading is denied to keep contents secret; a tree read back in may
// hold a writable root (a server's tenant directory inside its denied
// root of all tenants). A WriteDeny or protected path stays a hole.
func (p *Policy) holesFor(root string, holes []string) []string {
	return slices.DeleteFunc(slices.Clone(holes), func(h string) bool {
		if !within(root, h) || !slices.Contains(p.ReadDeny, h) || slices.Contains(p.WriteDeny, h) {
			return false
		}
		return slices.ContainsFunc(p.ReadAllow, func(a string) bool { return within(a, h) && within(root, a) })
	})
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// readDir lists a directory for carve.
func readDir(dir string) ([]fs.DirEntry, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return entries, err
}
