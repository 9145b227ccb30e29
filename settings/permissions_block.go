package settings

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// The permissions keys that fence the file tools into the working
// directories, and the one that turns permission prompts into denials.
const (
	KeyBlockWrites      = "blockWritesOutsideWorkingDirectories"
	KeyBlockReads       = "blockReadsOutsideWorkingDirectories"
	KeyBlockReadsExempt = "blockReadsExemptPaths"
	KeyWorkDirsExclude  = "workingDirectoriesExclude"
	KeyWorkDirsAsGiven  = "workingDirectoriesAsGiven"
	KeyDenyNoPrompt     = "denyInsteadOfPrompting"
)

// Switch names the settings file that turned a tightening switch on.
type Switch struct {
	Source Source
	// File is the file as a user would name it, as in [Error];
	// "--settings" for inline JSON.
	File string
}

// blockLayer is what one file says about the keys of this file.
type blockLayer struct {
	writes, reads, noPrompt bool
	// The path lists, as given; nil when the file does not set them.
	exempt, exclude, asGiven []string
	has                      map[string]bool // which of the lists the file sets
}

// readBlockKey reads key of the permissions object when it is one of the
// keys above, and reports whether it was. Wrong types are errors; the
// rules on who may set what are merge's (mergeBlock).
func (l *layer) readBlockKey(c *checker, key string, raw json.RawMessage) bool {
	field := "permissions." + key
	switch key {
	case KeyBlockWrites, KeyBlockReads, KeyDenyNoPrompt:
		v, ok := c.boolean(field, raw)
		if !ok || !v {
			return true
		}
		switch key {
		case KeyBlockWrites:
			l.block.writes = true
		case KeyBlockReads:
			l.block.reads = true
		default:
			l.block.noPrompt = true
		}
	case KeyBlockReadsExempt, KeyWorkDirsExclude, KeyWorkDirsAsGiven:
		n := len(c.errs)
		list := c.strs(field, raw, nil)
		if len(c.errs) > n {
			return true
		}
		if l.block.has == nil {
			l.block.has = map[string]bool{}
		}
		l.block.has[key] = true
		switch key {
		case KeyBlockReadsExempt:
			l.block.exempt = list
		case KeyWorkDirsExclude:
			l.block.exclude = list
		default:
			l.block.asGiven = list
		}
	default:
		return false
	}
	return true
}

// badBlockPath says why a path of blockReadsExemptPaths,
// workingDirectoriesExclude or workingDirectoriesAsGiven cannot be used,
// or returns "".
func badBlockPath(p string) string {
	switch {
	case p != strings.TrimSpace(p):
		return "it has white space at its start or end"
	case strings.HasPrefix(p, "~"):
		return "it starts with ~ (write the home directory out)"
	case slices.Contains(strings.Split(filepath.ToSlash(p), "/"), ".."):
		return "it has a .. segment"
	case !filepath.IsAbs(p):
		return "it is not an absolute path"
	case filepath.Clean(p) == string(filepath.Separator):
		return "it is the root directory"
	}
	return ""
}

// mergeBlock folds the block keys of l into s. The switches only tighten:
// blockWritesOutsideWorkingDirectories and
// blockReadsOutsideWorkingDirectories hold when any source says true;
// denyInsteadOfPrompting does too, except that project and local files
// are not trusted with it. The path lists are read from --settings alone.
func mergeBlock(s *Settings, l *layer) {
	b := &l.block
	p := &s.Permissions
	on := func(dst **Switch) {
		*dst = &Switch{Source: l.source, File: l.display}
	}
	if b.writes {
		on(&p.BlockWritesOutsideWorkingDirectories)
	}
	if b.reads {
		on(&p.BlockReadsOutsideWorkingDirectories)
	}
	if b.noPrompt {
		if repoShipped(l.source) {
			s.Warnings = append(s.Warnings, fmt.Sprintf(
				"%s: permissions.%s ignored: only the user settings, --settings and the managed policy may set it",
				l.display, KeyDenyNoPrompt))
		} else {
			on(&p.DenyInsteadOfPrompting)
		}
	}
	for _, k := range []struct {
		key  string
		list []string
		dst  *[]string
	}{
		{KeyBlockReadsExempt, b.exempt, &p.BlockReadsExemptPaths},
		{KeyWorkDirsExclude, b.exclude, &p.WorkingDirectoriesExclude},
		{KeyWorkDirsAsGiven, b.asGiven, &p.WorkingDirectoriesAsGiven},
	} {
		if !b.has[k.key] {
			continue
		}
		if l.source != FlagSettings {
			s.Warnings = append(s.Warnings, fmt.Sprintf(
				"%s: permissions.%s ignored: it is read from --settings only", l.display, k.key))
			continue
		}
		var out []string
		for i, e := range k.list {
			if why := badBlockPath(e); why != "" {
				s.Warnings = append(s.Warnings, fmt.Sprintf("%s: permissions.%s[%d] %q ignored: %s",
					l.display, k.key, i, e, why))
				continue
			}
			if c := filepath.Clean(e); !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
		*k.dst = out
	}
}
