package tools

import (
	"context"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// vcsDir reports whether name is a version control directory, which Glob
// and Grep never enter.
func vcsDir(name string) bool {
	switch name {
	case ".git", ".svn", ".hg", ".bzr", ".jj", ".sl":
		return true
	}
	return false
}

// walkConfig says how walkTree walks a directory tree.
type walkConfig struct {
	// hidden includes entries whose names start with a dot (the root
	// itself is always walked).
	hidden bool
	// ignore honours .gitignore files (inside a git repository, with
	// .git/info/exclude), and .ignore and .rgignore files anywhere.
	ignore bool
	// descend, when set, decides whether to enter the directory rel
	// (slash-separated, relative to the root) at depth (1 for the root's
	// children).
	descend func(rel string, depth int) bool
	// file is called for every regular file (symbolic links are not
	// followed), from several goroutines at once, in no particular order.
	file func(abs, rel string, d fs.DirEntry)
	// name, when set, is asked first about each regular file's name: file
	// is not called for those it refuses (which saves building their
	// paths).
	name func(name string) bool
	// inline calls file as soon as a directory's entries are read, rather
	// than handing batches of files to the pool: for light work on each
	// file. The directory is then still open, which makes the entry's Info
	// cheaper on Linux (see readWalkDir); file must not keep the entry.
	inline bool
	// workers bounds the goroutines; 0 means GOMAXPROCS.
	workers int
	// deny, when set, is the session's read filter (tool.Env.ReadDenied
	// bound to the tool): the files and directories it refuses are left
	// out, and a refused directory is not entered. It is asked about the
	// entry's path and about the same path below the root's physical form
	// (the walk follows no link below the root), and about the root itself
	// before anything is read.
	deny func(names ...string) bool
}

// dirJob is a directory to read or, when files is set, a batch of files
// to hand to walkConfig.file.
type dirJob struct {
	abs, rel string
	depth    int
	ign      *ignoreNode
	files    []walkFile
}

type walkFile struct {
	abs, rel string
	d        fs.DirEntry
}

// walkBatch is how many files one job carries: enough to amortize the
// queue, few enough to spread a flat directory over the workers.
const walkBatch = 16

// walkTree walks the tree under root with a bounded pool of workers that
// read directories and call cfg.file on batches of their files. Directories that cannot be read below
// the root are skipped; an unreadable root is an error. It stops early when
// ctx is done and then returns ctx.Err().
func walkTree(ctx context.Context, root string, cfg walkConfig) error {
	workers := cfg.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	root = filepath.Clean(root)
	var physRoot string
	if cfg.deny != nil {
		physRoot = physicalPath(root)
		if cfg.deny(root, physRoot) {
			return nil
		}
	}
	var rootIgn *ignoreNode
	if cfg.ignore {
		rootIgn = ancestorIgnores(root)
	}
	rootEntries, rootDone, err := readWalkDir(root, cfg.inline)
	if err != nil {
		return err
	}

	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		queue   []dirJob
		pending = 1 // jobs queued or running
	)
	process := func(job dirJob, entries []fs.DirEntry) []dirJob {
		// job.abs is clean: it ends with a separator only when it is the
		// root of the file system.
		sep := string(filepath.Separator)
		if strings.HasSuffix(job.abs, sep) {
			sep = ""
		}
		ign := job.ign
		if cfg.ignore {
			ign = ign.load(job.abs, entries)
		}
		var subdirs []dirJob
		var batch []walkFile
		for _, d := range entries {
			name := d.Name()
			if !cfg.hidden && strings.HasPrefix(name, ".") {
				continue
			}
			typ := d.Type()
			isDir := typ.IsDir()
			if isDir && vcsDir(name) || cfg.name != nil && typ.IsRegular() && !cfg.name(name) {
				continue
			}
			abs := job.abs + sep + name
			rel := name
			if job.rel != "" {
				rel = job.rel + "/" + name
			}
			if ign != nil && ign.ignored(abs, isDir) {
				continue
			}
			if cfg.deny != nil && (isDir || typ.IsRegular()) && cfg.deny(abs, underPhysical(root, physRoot, abs)) {
				continue
			}
			switch {
			case isDir:
				if cfg.descend == nil || cfg.descend(rel, job.depth+1) {
					subdirs = append(subdirs, dirJob{abs: abs, rel: rel, depth: job.depth + 1, ign: ign})
				}
			case typ.IsRegular() && cfg.inline:
				if ctx.Err() == nil {
					cfg.file(abs, rel, d)
				}
			case typ.IsRegular():
				batch = append(batch, walkFile{abs, rel, d})
				if len(batch) == walkBatch {
					subdirs = append(subdirs, dirJob{files: batch})
					batch = nil
				}
			}
		}
		if len(batch) > 0 {
			subdirs = append(subdirs, dirJob{files: batch})
		}
		return subdirs
	}

	worker := func() {
		for {
			mu.Lock()
			for len(queue) == 0 && pending > 0 {
				cond.Wait()
			}
			if pending == 0 {
				mu.Unlock()
				return
			}
			job := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			mu.Unlock()

			var subdirs []dirJob
			switch {
			case ctx.Err() != nil:
			case job.files != nil:
				for _, f := range job.files {
					cfg.file(f.abs, f.rel, f.d)
				}
			default:
				if entries, done, err := readWalkDir(job.abs, cfg.inline); err == nil {
					subdirs = process(job, entries)
					done()
				}
			}

			mu.Lock()
			queue = append(queue, subdirs...)
			pending += len(subdirs) - 1
			if pending == 0 || len(subdirs) > 0 {
				cond.Broadcast()
			}
			mu.Unlock()
		}
	}

	// The root's entries are already read; process them here so that its
	// subdirectories seed the queue.
	queue = process(dirJob{abs: root, ign: rootIgn}, rootEntries)
	rootDone()
	pending = len(queue)
	if pending == 0 {
		return ctx.Err()
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(worker)
	}
	wg.Wait()
	return ctx.Err()
}

// underPhysical returns abs, a path below root, moved below root's
// physical form phys.
func underPhysical(root, phys, abs string) string {
	if phys == root || phys == "" {
		return abs
	}
	rest := abs[len(root):]
	if root == string(filepath.Separator) {
		rest = abs[len(root)-1:]
	}
	if phys == string(filepath.Separator) {
		return rest
	}
	return phys + rest
}
