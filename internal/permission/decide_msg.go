package permission

import (
	"fmt"
	"strings"
)

// Messages of the path checks whose wording depends on where the path is.

// shownProtected picks the protected candidate for a message.
func (st *state) shownProtected(cands []string) string {
	for _, c := range cands {
		if st.isProtected(c) {
			return c
		}
	}
	return st.shownPath(cands)
}

// msgShellRead explains why a shell command's read of path needs
// approval: either the path lies outside the working directories, or it
// lies inside but another command of the line may change where it leads
// before this one runs.
func (st *state) msgShellRead(first, path string) string {
	if path != "" && st.inside(path) {
		return fmt.Sprintf("%s in '%s' needs approval: the path is inside the working directories, but another command in this line may change where it leads before it runs.", first, path)
	}
	return fmt.Sprintf("%s in '%s' needs approval: it reads outside the working directories (%s).", first, path, strings.Join(st.dirs, ", "))
}

// msgUnknownRoot explains an Ask for a Glob whose pattern leaves the
// search path in a way that cannot be known before it runs.
func msgUnknownRoot(tool, pattern string) string {
	return fmt.Sprintf("%s with the pattern %q needs approval: the directory it searches cannot be known before it runs.", tool, pattern)
}

// msgShellWrite explains why a shell command's write to path needs
// approval, saying whether the path lies in the working directories.
func (st *state) msgShellWrite(first, path string) string {
	where := "outside the working directories for this session"
	if path != "" && st.inside(path) {
		where = fmt.Sprintf("inside the working directories for this session ('%s')", strings.Join(st.dirs, "', '"))
	}
	return fmt.Sprintf("%s in '%s' needs approval. The path is %s, and shell commands that create, change or remove files there are not approved without asking.", first, path, where)
}
