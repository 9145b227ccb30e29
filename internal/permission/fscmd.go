package permission

import (
	"strings"

	"github.com/agentloop/agentloop/internal/lazy"
)

// fsCall is a filesystem command of the set that acceptEdits approves
// inside the working directories: mkdir, touch, rm, rmdir, mv, cp and sed
// (in place).
type fsCall struct {
	name    string
	writes  []shWord // paths it creates, changes or removes
	reads   []shWord // paths it only reads
	trees   []shWord // directories it reads whole (cp -r sources)
	removes bool     // rm and rmdir, subject to the critical-path check
	opaque  bool     // may create or move symbolic links (cp, mv)
}

type fsSpec struct {
	spec      argSpec
	allowed   map[string]bool // every option it may use
	writeVals []string        // options whose value is a path written
	readVals  []string        // options whose value is a path read
	removes   bool
	opaque    bool
}

var fsCommandsOnce lazy.Value[map[string]fsSpec] // the value of fsCommands, built at its first use

func fsCommands() map[string]fsSpec { return fsCommandsOnce.Get(newFsCommands) }

func newFsCommands() map[string]fsSpec {
	return map[string]fsSpec{
		"mkdir": {
			spec:    argSpec{shortVal: "m", longVal: set("mode")},
			allowed: set("-p", "--parents", "-v", "--verbose", "-m", "--mode"),
		},
		"touch": {
			spec:     argSpec{shortVal: "dtr", longVal: set("date", "reference")},
			allowed:  set("-a", "-c", "-m", "-h", "-f", "--no-create", "--no-dereference", "-d", "--date", "-t", "-r", "--reference"),
			readVals: []string{"-r", "--reference"},
		},
		"rm": {
			allowed: set("-r", "-R", "-f", "-i", "-I", "-d", "-v", "--recursive", "--force", "--dir", "--verbose",
				"--one-file-system", "--preserve-root"),
			removes: true,
		},
		"rmdir": {
			allowed: set("-p", "--parents", "-v", "--verbose", "--ignore-fail-on-non-empty"),
			removes: true,
		},
		"mv": {
			spec: argSpec{shortVal: "St", longVal: set("suffix", "target-directory")},
			allowed: set("-f", "-i", "-n", "-v", "-u", "-T", "-b", "--force", "--interactive", "--no-clobber", "--verbose",
				"--update", "--no-target-directory", "--strip-trailing-slashes", "--backup", "-S", "--suffix", "-t", "--target-directory"),
			writeVals: []string{"-t", "--target-directory"},
			opaque:    true,
		},
		"cp": {
			spec: argSpec{shortVal: "St", longVal: set("suffix", "target-directory")},
			allowed: set("-r", "-R", "-a", "-p", "-f", "-i", "-n", "-v", "-u", "-L", "-P", "-H", "-T", "-d", "-x", "-b",
				"--recursive", "--archive", "--force", "--interactive", "--no-clobber", "--verbose", "--update",
				"--dereference", "--no-dereference", "--no-target-directory", "--one-file-system", "--parents",
				"--preserve", "--no-preserve", "--strip-trailing-slashes", "--backup", "--sparse", "--reflink",
				"-S", "--suffix", "-t", "--target-directory"),
			writeVals: []string{"-t", "--target-directory"},
			opaque:    true,
		},
	}
}

// parseFSCommand recognizes a command of the acceptEdits filesystem set
// and the paths it works on. It reports false for other commands and for
// options it does not know (cp -s, cp -l, rm --no-preserve-root, …).
func parseFSCommand(form []shWord) (fsCall, bool) {
	name, ok := baseName(form[0])
	if !ok {
		return fsCall{}, false
	}
	if name == "sed" {
		s, ok := parseSed(form[1:])
		if !ok || !s.inPlace || len(s.files) == 0 {
			return fsCall{}, false
		}
		return fsCall{name: name, writes: append(append([]shWord(nil), s.files...), s.backups()...)}, true
	}
	fs, ok := fsCommands()[name]
	if !ok {
		return fsCall{}, false
	}
	p := parseArgs(form[1:], fs.spec)
	if p.unsure {
		return fsCall{}, false
	}
	for _, o := range p.opts {
		if !fs.allowed[o.name] {
			return fsCall{}, false
		}
	}
	c := fsCall{name: name, removes: fs.removes, opaque: fs.opaque}
	if name == "cp" || name == "mv" {
		copyTargets(&c, p)
	} else {
		c.writes = append(c.writes, p.operands...)
	}
	c.reads = append(c.reads, p.values(fs.readVals...)...)
	if len(c.writes) == 0 {
		return fsCall{}, false
	}
	return c, true
}

// isRemoval reports whether a form removes files wholesale (for the
// critical-path check, which applies even when the options are not
// understood): see removalTargets.
func isRemoval(form []shWord) bool {
	_, _, _, removes := removalTargets(form)
	return removes
}

// copyTargets fills in what cp and mv write and read. The destination is
// written, and so is, for each source, the file it becomes there:
// DEST/base(SOURCE), or DEST/SOURCE with --parents (which may climb out of
// DEST with ".."). mv also removes its sources; cp reads them, whole
// trees when it copies recursively.
func copyTargets(c *fsCall, p parsedArgs) {
	sources, dests := p.operands, p.values("-t", "--target-directory")
	if len(dests) == 0 && len(sources) > 0 {
		dests = sources[len(sources)-1:]
		sources = sources[:len(sources)-1]
	}
	parents := p.has("--parents")
	c.writes = append(c.writes, dests...)
	for _, d := range dests {
		if p.has("-T", "--no-target-directory") {
			break // DEST is the file itself
		}
		for _, s := range sources {
			c.writes = append(c.writes, joinWord(d, s, !parents))
		}
	}
	switch {
	case c.name == "mv":
		c.writes = append(c.writes, sources...)
	case p.has("-r", "-R", "-a", "--recursive", "--archive"):
		c.trees = append(c.trees, sources...)
	default:
		c.reads = append(c.reads, sources...)
	}
}

// joinWord is the path dir/name as a word (name's base name only, with
// base); unknown when either part is only known when the command runs.
func joinWord(dir, name shWord, base bool) shWord {
	t := name.text
	pat := name.pat
	if base {
		t = strings.TrimRight(t, "/")
		t = t[strings.LastIndexByte(t, '/')+1:]
		pat = strings.TrimRight(pat, "/")
		pat = pat[strings.LastIndexByte(pat, '/')+1:]
	}
	if name.kind == wordTilde {
		if base && t != "" {
			return joinWord(dir, litWord(t), false)
		}
		return shWord{kind: wordUnknown}
	}
	d, ok := dir.lit()
	if !ok || name.kind != wordLiteral && name.kind != wordGlob || t == "" && base {
		return shWord{kind: wordUnknown}
	}
	if name.kind == wordGlob {
		return shWord{kind: wordGlob, text: d + "/" + t, pat: escapeMatch(d) + "/" + pat, safe: dir.safe && name.safe}
	}
	return litWord(d + "/" + t)
}

// removalTargets reports whether a form removes files wholesale, as rm and
// rmdir do, find with -delete or a program run by -exec that may change
// files, and rsync with --delete… or --remove-source-files; and which
// paths it removes under. cwd is set when it works on the working
// directory itself (find without a starting point); unsure when a target
// is only known when it runs.
func removalTargets(form []shWord) (targets []shWord, cwd, unsure, removes bool) {
	name, ok := form[0].lit()
	if !ok {
		return nil, false, false, false
	}
	name = name[strings.LastIndexByte(name, '/')+1:]
	switch name {
	case "rm", "rmdir", "unlink", "shred":
		p := parseArgs(form[1:], argSpec{})
		return p.operands, false, p.unsure, true
	case "find":
		starts, rm := findRemoves(form)
		if !rm {
			return nil, false, false, false
		}
		for _, w := range starts {
			if w.kind != wordLiteral && w.mayBeFlag() {
				unsure = true
			}
		}
		return starts, len(starts) == 0, unsure, true
	case "rsync":
		p := parseArgs(form[1:], rsyncSpec())
		del := rsyncDeletes(p)
		if !del && !p.unsure {
			return nil, false, false, false
		}
		if len(p.operands) == 0 {
			return nil, false, true, true
		}
		if p.has("--remove-source-files", "--remove-sent-files", "--remove") || p.unsure {
			return p.operands, false, p.unsure, true
		}
		return p.operands[len(p.operands)-1:], false, false, true
	}
	return nil, false, false, false
}
