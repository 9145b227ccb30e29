package permission

import (
	"strings"
	"testing"
)

// FuzzReadOnlyParsers feeds word lists to the option parsers of the
// read-only checks, the hidden-write and removal finders: none may panic,
// and what they accept keeps the invariants below.
func FuzzReadOnlyParsers(f *testing.F) {
	for _, s := range []string{
		"git -c core.pager=x log", "git grep -iOtouch foo", "git branch --column newb", "git diff --outpu x",
		"git config --get a.b --repl c", "git -C src diff --no-index a ../b", "git tag -n5 -l v1",
		"grep --dir=recurse -e x .", "grep -3nrf pats src", "sort --outp=x -k2 f", "sed -i'../*' s/a/b/ f",
		"jq -rc 'import \"m\" as m; .' f", "cp --parents -t d a/b", "tar cfF x evil src", "find ~ -exec rm {} +",
		"rsync -r --dele a/ ~", "date --se=1", "tree -o x", "uniq a b", "git remote show -n origin",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		fields := strings.Fields(line)
		if len(fields) == 0 || len(fields) > 40 {
			return
		}
		words := make([]shWord, len(fields))
		for i, w := range fields {
			words[i] = litWord(w)
		}
		for _, spec := range []argSpec{grepSpec(), sortSpec(), dateSpec(), diffSpec(), tarSpec(), rsyncSpec()} {
			_ = parseArgs(words[1:], spec)
		}
		_, _ = parseSed(words[1:])
		_, _ = parseFSCommand(words)
		_, _, _, _ = removalTargets(words)
		_ = sideWrites(words)
		_ = execOrDelete(words)
		r := readOnlyCheck(words)
		if !r.ok || fields[0] != "git" {
			return
		}
		// git accepted: no configuration or program on its command line,
		// and no option that writes or runs before "--".
		sub := false
		for i, w := range fields[1:] {
			if w == "--" {
				break
			}
			if !sub && (strings.HasPrefix(w, "-c") || strings.HasPrefix(w, "--config-env") || strings.HasPrefix(w, "--exec-path=") ||
				strings.HasPrefix(w, "--git-dir") || strings.HasPrefix(w, "--work-tree")) {
				t.Fatalf("git accepted with global option %q: %q", w, line)
			}
			if !sub && !strings.HasPrefix(w, "-") && (i == 0 || fields[i] != "-C") {
				sub = true
				continue
			}
			name, _, _ := strings.Cut(w, "=")
			if sub && len(name) > 2 && strings.HasPrefix(name, "--") && !gitSafeLong()[name] {
				for _, d := range []string{"--output", "--ext-diff", "--textconv", "--open-files-in-pager", "--upload-pack"} {
					if strings.HasPrefix(d, name) {
						t.Fatalf("git accepted with %q (abbreviates %s): %q", w, d, line)
					}
				}
			}
		}
	})
}
