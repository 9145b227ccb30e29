package permission

import "strings"

// fsCall is a filesystem command of the set that acceptEdits approves
// inside the working directories: mkdir, touch, rm, rmdir, mv, cp and sed
// (in place).
type fsCall struct {
	name    string
	writes  []shWord // paths it creates, changes or removes
	reads   []shWord // paths it only reads
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

var fsCommands = map[string]fsSpec{
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
		return fsCall{name: name, writes: s.files}, true
	}
	fs, ok := fsCommands[name]
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
	c.writes = append(c.writes, p.operands...)
	c.writes = append(c.writes, p.values(fs.writeVals...)...)
	c.reads = p.values(fs.readVals...)
	if len(c.writes) == 0 {
		return fsCall{}, false
	}
	return c, true
}

// isRemoval reports whether a form is rm or rmdir, whatever its options
// (for the critical-path check, which applies even when the options are
// not understood).
func isRemoval(form []shWord) bool {
	name, ok := form[0].lit()
	if !ok {
		return false
	}
	name = name[strings.LastIndexByte(name, '/')+1:]
	return name == "rm" || name == "rmdir"
}
