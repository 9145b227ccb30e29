package tools

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/tool"
)

// fileTarget is the file a file tool (Read, Write, Edit, NotebookEdit)
// works on. path is the file as the model named it, for messages and
// results; io is the physical path the tool opens, never following a
// symbolic link on the way: the path the permission check resolved
// (tool.Env.CheckedPath) or, without one, the path resolved now.
type fileTarget struct {
	path string
	io   string
}

// targetOf returns the target of a call on path, an absolute clean path.
func targetOf(call *tool.Call, path string) fileTarget {
	if call != nil && call.Env != nil && call.Env.CheckedPath != nil {
		if p, ok := call.Env.CheckedPath(call.ID); ok && p != "" {
			return fileTarget{path: path, io: p}
		}
	}
	return fileTarget{path: path, io: physicalPath(path)}
}

// physicalPath resolves the symbolic links of an absolute path the way
// the permission checker does (dangling links included), so that a tool
// run without a checker reaches the file a check would have judged.
func physicalPath(p string) string {
	r, err := permission.Resolve("/", p)
	if err != nil {
		return p
	}
	return r
}

// key is the file's key in the session's file state.
func (t fileTarget) key() string { return t.io }

// dir opens the target's directory, refusing links, for a stat and a
// read of the file over one walk; the caller closes it.
func (t fileTarget) dir() (*targetDir, error) { return openTargetDir(t.io) }

// write is os.WriteFile of the target, refusing links.
func (t fileTarget) write(data []byte, perm fs.FileMode) error {
	return writeFileNoFollow(t.io, data, perm)
}

// mkdirParent is os.MkdirAll of the target's directory, refusing links.
func (t fileTarget) mkdirParent() error { return mkdirParentNoFollow(t.io) }

// hostOf returns the session's tool.Host, nil for the local machine.
func hostOf(env *tool.Env) *tool.Host {
	if env == nil {
		return nil
	}
	return env.Host
}

// readText returns the contents of the target, a text file that a stat
// of dir showed to be a regular file of size bytes: through the session's
// Host when it reads text files (an editor's buffer), else from dir.
func (t fileTarget) readText(ctx context.Context, env *tool.Env, dir *targetDir, size int64) ([]byte, error) {
	if h := hostOf(env); h != nil && h.ReadTextFile != nil {
		data, err := h.ReadTextFile(ctx, t.io)
		if err != nil {
			return nil, fmt.Errorf("the host could not read it: %w", err)
		}
		return data, nil
	}
	return dir.read(size)
}

// writeText replaces the contents of the target, a text file: through
// the session's Host when it writes text files, else on disk with perm
// (refusing links).
func (t fileTarget) writeText(ctx context.Context, env *tool.Env, data []byte, perm fs.FileMode) error {
	if h := hostOf(env); h != nil && h.WriteTextFile != nil {
		if err := h.WriteTextFile(ctx, t.io, data); err != nil {
			return fmt.Errorf("the host could not write it: %w", err)
		}
		return nil
	}
	return t.write(data, perm)
}
