package memory

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Files read on the model's behalf from project configuration (CLAUDE.md
// files and their imports here, skills, commands and agents in
// internal/projectfiles) are judged on the file they reach, not on the
// name they are reached by: the name is resolved ([Physical]), the
// physical path is judged (by the caller's permission rules and, for a
// project's files, by [Within] the project), and then that physical path
// is opened one component at a time without following any link
// ([ReadPhysical]), so a link swapped in after the judgement makes the
// read fail instead of reaching another file.

// Physical returns path, made absolute and clean, with every symbolic
// link in it resolved: the file that opening path reaches now.
func Physical(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// Within reports whether phys, a physical path (see [Physical]), is one
// of roots or lies below one of them. Each root is taken with its links
// resolved (as it is when it cannot be resolved); empty roots are
// skipped.
func Within(phys string, roots ...string) bool {
	phys = filepath.Clean(phys)
	for _, r := range roots {
		if r == "" {
			continue
		}
		rr, err := filepath.EvalSymlinks(r)
		if err != nil {
			rr = filepath.Clean(r)
		}
		rel, err := filepath.Rel(rr, phys)
		if err == nil && !filepath.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// ProjectRoot is the project that cwd belongs to, the directory whose
// checked-in files may refer to each other: the repository root (the
// nearest directory from cwd up holding .git), looked for no higher than
// home, or cwd itself when there is none. A repository whose root is the
// home directory or the file system's root (a dotfiles checkout) does not
// make the whole home a project: cwd is the project then.
func ProjectRoot(cwd, home string) string {
	cwd = filepath.Clean(cwd)
	dirs := walkUp(cwd, home)
	top := dirs[0]
	if !lexists(filepath.Join(top, ".git")) {
		return cwd
	}
	if (home != "" && top == filepath.Clean(home)) || filepath.Dir(top) == top {
		return cwd
	}
	return top
}

// The reasons ReadPhysical gives for a file it does not read.
var (
	ErrIsDir      = errors.New("it is a directory")
	ErrNotRegular = errors.New("it is not a regular file")
	// ErrMoved: a symbolic link stood on the judged path when it was
	// opened, so the path changed after it was judged.
	ErrMoved = errors.New("a symbolic link appeared on its path after it was checked, so it was not read")
)

// TooLargeError is ReadPhysical's error for a file larger than its limit.
type TooLargeError struct{ Max int64 }

func (e *TooLargeError) Error() string { return fmt.Sprintf("it is larger than %d bytes", e.Max) }

// readOpened reads f, opened on a judged path and described by fi, if it
// is a regular file of at most max bytes; a file that grows past max
// while it is read is refused too.
func readOpened(f *os.File, fi fs.FileInfo, max int64) ([]byte, error) {
	switch {
	case fi.IsDir():
		return nil, ErrIsDir
	case !fi.Mode().IsRegular():
		return nil, ErrNotRegular
	case fi.Size() > max:
		return nil, &TooLargeError{Max: max}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Max: max}
	}
	return data, nil
}
