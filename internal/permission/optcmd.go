package permission

import (
	"strings"

	"github.com/agentloop/agentloop/internal/lazy"
)

// Commands outside the read-only set whose options run programs, delete
// files or write files other than their operands. An allow rule with a
// wildcard (Bash(rsync:*)) does not approve a line that uses such an
// option (an exact rule still can), and the files they write are judged as
// writes: deny rules and protected paths apply to them.

var rsyncSpecOnce lazy.Value[argSpec] // the value of rsyncSpec, built at its first use

func rsyncSpec() argSpec { return rsyncSpecOnce.Get(newRsyncSpec) }

func newRsyncSpec() argSpec {
	return argSpec{
		shortVal: "eBfTM",
		longVal: set("rsh", "rsync-path", "filter", "exclude", "include", "exclude-from", "include-from", "files-from",
			"temp-dir", "compare-dest", "copy-dest", "link-dest", "backup-dir", "suffix", "chmod", "chown", "usermap",
			"groupmap", "block-size", "max-delete", "max-size", "min-size", "partial-dir", "timeout", "contimeout",
			"port", "sockopts", "log-file", "log-file-format", "out-format", "password-file", "bwlimit", "write-batch",
			"only-write-batch", "read-batch", "protocol", "iconv", "checksum-seed", "modify-window", "compress-level",
			"skip-compress", "info", "debug", "outbuf", "remote-option", "address", "checksum-choice",
			"compress-choice", "stop-after", "stop-at"),
	}
}

// rsyncDeletes reports whether rsync deletes files: --del, --delete…
// (abbreviations counted), --remove-source-files.
func rsyncDeletes(p parsedArgs) bool {
	for _, o := range p.opts {
		n := o.name
		if n == "--del" || strings.HasPrefix(n, "--delete") || len(n) > 5 && strings.HasPrefix("--delete", n) ||
			optMatches(n, "--remove-source-files") || optMatches(n, "--remove-sent-files") {
			return true
		}
	}
	return false
}

var tarSpecOnce lazy.Value[argSpec] // the value of tarSpec, built at its first use

func tarSpec() argSpec { return tarSpecOnce.Get(newTarSpec) }

func newTarSpec() argSpec {
	return argSpec{
		shortVal: "bCfFgHIKLNTVX",
		longVal: set("blocking-factor", "directory", "file", "info-script", "new-volume-script", "listed-incremental",
			"format", "use-compress-program", "starting-file", "tape-length", "newer", "after-date", "newer-mtime",
			"files-from", "label", "exclude-from", "to-command", "rsh-command", "rmt-command", "checkpoint-action",
			"owner", "group", "mode", "mtime", "transform", "xform", "exclude", "record-size", "volno-file",
			"index-file", "suffix", "backup", "strip-components", "occurrence", "sort", "warning", "quoting-style",
			"checkpoint", "hole-detection", "atime-preserve"),
	}
}

// execOrDelete reports whether a form uses an option that runs a program
// or deletes files.
func execOrDelete(form []shWord) bool {
	name, ok := baseName(form[0])
	if !ok {
		return false
	}
	args := form[1:]
	switch name {
	case "rsync":
		p := parseArgs(args, rsyncSpec())
		return p.unsure || rsyncDeletes(p) || p.has("-e", "--rsh", "--rsync-path", "--remote-option", "-M",
			"--write-batch", "--only-write-batch", "--read-batch", "--log-file")
	case "tar":
		p := parseArgs(tarArgs(args), tarSpec())
		return p.unsure || p.has("-I", "--use-compress-program", "--to-command", "--checkpoint-action", "-F",
			"--info-script", "--new-volume-script", "--rsh-command", "--rmt-command", "--remove-files", "--delete")
	case "zip":
		for _, w := range args {
			t, ok := w.lit()
			if !ok && w.mayBeFlag() || t == "-TT" || strings.HasPrefix(t, "--unzip-command") || t == "-m" || t == "--move" ||
				strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.Contains(t, "T") {
				return true
			}
		}
	case "sort":
		p := parseArgs(args, sortSpec())
		return p.unsure || p.unknown || p.has("--compress-program")
	case "git":
		return gitRunsPrograms(args)
	case "find":
		_, removes := findRemoves(form)
		return removes
	case "wget":
		for _, w := range args {
			t, _ := w.lit()
			if optMatches(strings.SplitN(t, "=", 2)[0], "--use-askpass") || optMatches(strings.SplitN(t, "=", 2)[0], "--delete-after") {
				return true
			}
		}
	case "curl":
		for _, w := range args {
			if t, _ := w.lit(); t == "-K" || strings.HasPrefix(t, "--config") || strings.HasPrefix(t, "-K") {
				return true // a config file can hold any option
			}
		}
	}
	return false
}

// tarArgs expands tar's old-style first word ("czfF" without a dash):
// each letter is an option, and those that take a value take the next
// words in turn.
func tarArgs(args []shWord) []shWord {
	if len(args) == 0 {
		return args
	}
	t, ok := args[0].lit()
	if !ok || t == "" || strings.HasPrefix(t, "-") {
		return args
	}
	var out []shWord
	next := 1
	for i := 0; i < len(t); i++ {
		out = append(out, litWord("-"+t[i:i+1]))
		if strings.IndexByte(tarSpec().shortVal, t[i]) >= 0 && next < len(args) {
			out = append(out, args[next])
			next++
		}
	}
	return append(out, args[next:]...)
}

// sideWrites returns the files a command writes through its options or
// operands where the command is not one of the acceptEdits filesystem
// commands: output files of curl, wget, sort, uniq, tree, tee; the
// extraction directory of tar and unzip; the destination of rsync, ln and
// install. A word only known when it runs is returned as such (it makes
// deny rules ask).
func sideWrites(form []shWord) []shWord {
	name, ok := baseName(form[0])
	if !ok {
		return nil
	}
	args := form[1:]
	switch name {
	case "tee", "truncate", "chmod", "chown", "chgrp", "touch", "shred":
		p := parseArgs(args, argSpec{shortVal: "sr", longVal: set("size", "reference")})
		return p.operands
	case "ln", "install":
		p := parseArgs(args, argSpec{shortVal: "tSmogb", longVal: set("target-directory", "suffix", "mode", "owner", "group", "backup")})
		return append(p.operands, p.values("-t", "--target-directory")...)
	case "sort":
		p := parseArgs(args, sortSpec())
		return p.values("-o", "--output", "-T", "--temporary-directory")
	case "uniq":
		p := parseArgs(args, argSpec{shortVal: "fsw", longVal: set("skip-fields", "skip-chars", "check-chars")})
		if len(p.operands) > 1 {
			return p.operands[1:]
		}
	case "tree":
		p := parseArgs(args, argSpec{shortVal: "LPIHTo"})
		return p.values("-o")
	case "curl":
		p := parseArgs(args, argSpec{shortVal: "oDcKdHuxXAeErTFwYyzCbQ", longVal: set("output", "output-dir", "dump-header",
			"cookie-jar", "trace", "trace-ascii", "libcurl", "etag-save", "hsts", "alt-svc", "stderr", "config",
			"data", "header", "user", "proxy", "request", "user-agent", "referer", "cert", "key", "upload-file",
			"write-out", "url", "form", "cookie", "data-binary", "data-raw", "data-urlencode", "range", "max-time",
			"connect-timeout", "retry", "cacert", "resolve", "json")})
		out := p.values("-o", "--output", "--output-dir", "-D", "--dump-header", "-c", "--cookie-jar", "--trace",
			"--trace-ascii", "--libcurl", "--etag-save", "--hsts", "--alt-svc", "--stderr")
		if p.has("-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name") {
			out = append(out, shWord{kind: wordUnknown}) // a name the server chooses
		}
		return out
	case "wget":
		p := parseArgs(args, argSpec{shortVal: "OPoaeiBtTwQUlAR", longVal: set("output-document", "directory-prefix",
			"output-file", "append-output", "execute", "input-file", "base", "tries", "timeout", "wait", "quota",
			"user-agent", "level", "accept", "reject", "header", "post-data", "post-file", "body-file", "user",
			"password", "save-cookies", "load-cookies", "warc-file")})
		out := p.values("-O", "--output-document", "-P", "--directory-prefix", "-o", "--output-file", "-a",
			"--append-output", "--save-cookies", "--warc-file")
		if len(p.values("-O", "--output-document")) == 0 {
			out = append(out, shWord{kind: wordUnknown}) // a name the server chooses
		}
		return out
	case "tar":
		p := parseArgs(tarArgs(args), tarSpec())
		if p.has("-x", "--extract", "--get") {
			dirs := p.values("-C", "--directory")
			if len(dirs) == 0 {
				dirs = []shWord{litWord(".")}
			}
			return append(dirs, shWord{kind: wordUnknown}) // member names are in the archive
		}
		if p.has("-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate", "--concatenate") {
			return p.values("-f", "--file")
		}
	case "unzip":
		p := parseArgs(args, argSpec{shortVal: "dxP"})
		if p.has("-l", "-v", "-t", "-z", "-Z", "-p", "-c") {
			return nil
		}
		return append(p.values("-d"), shWord{kind: wordUnknown})
	case "rsync":
		p := parseArgs(args, rsyncSpec())
		if len(p.operands) > 0 {
			return p.operands[len(p.operands)-1:]
		}
	case "dd":
		for _, w := range args {
			if t, ok := w.lit(); ok && strings.HasPrefix(t, "of=") {
				return []shWord{litWord(t[3:])}
			} else if !ok {
				return []shWord{{kind: wordUnknown}}
			}
		}
	}
	return nil
}

// gitRunsPrograms reports whether a git command line sets configuration
// (which can name programs: core.pager, core.sshCommand, diff.external,
// alias.x=!cmd), moves git's program directory, or uses an option that
// runs a program given on the command line.
func gitRunsPrograms(args []shWord) bool {
	sub := ""
	for i, w := range args {
		t, ok := w.lit()
		if !ok {
			return w.mayBeFlag()
		}
		if sub == "" {
			switch {
			case t == "-c" || strings.HasPrefix(t, "-c") && !strings.HasPrefix(t, "--") ||
				strings.HasPrefix(t, "--config-env") || strings.HasPrefix(t, "--exec-path="):
				return true
			case t == "-C" || t == "--git-dir" || t == "--work-tree" || t == "--namespace":
				continue
			case !strings.HasPrefix(t, "-") && (i == 0 || !isGitValued(args[i-1])):
				sub = t
			}
			continue
		}
		name, _, _ := strings.Cut(t, "=")
		if strings.HasPrefix(name, "--") && len(name) > 2 {
			for _, d := range []string{"--ext-diff", "--textconv", "--open-files-in-pager", "--upload-pack",
				"--receive-pack", "--exec", "--extcmd", "--tool", "--filters"} {
				if strings.HasPrefix(d, name) {
					return true
				}
			}
			continue
		}
		if strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") {
			switch {
			case sub == "grep" && strings.ContainsRune(t, 'O'),
				(sub == "clone" || sub == "ls-remote" || sub == "fetch" || sub == "pull") && t == "-u",
				sub == "rebase" && strings.ContainsRune(t, 'x'),
				sub == "difftool" && (strings.ContainsRune(t, 'x') || strings.ContainsRune(t, 't')):
				return true
			}
		}
		if sub == "bisect" && t == "run" || sub == "submodule" && t == "foreach" || sub == "filter-branch" ||
			sub == "mergetool" || sub == "daemon" {
			return true
		}
	}
	return false
}

func isGitValued(w shWord) bool {
	return w.is("-C") || w.is("--git-dir") || w.is("--work-tree") || w.is("--namespace")
}
