package permission

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// roCase is a checker-level case of the read-only, hidden-write and
// critical-removal checks (issue 8, classes 2, 3 and 6). setup entries are
// "mkdir PATH", "file PATH CONTENT" and "symlink LINK TARGET", in the
// layout of tableEnv.
type roCase struct {
	name  string
	mode  string // default when empty
	allow []string
	deny  []string
	setup []string
	cmd   string
	want  Behavior
}

func (c roCase) run(t *testing.T) {
	t.Helper()
	e := newTableEnv(t)
	var steps []json.RawMessage
	for _, s := range c.setup {
		f := strings.SplitN(s, " ", 3)
		var raw []byte
		if len(f) == 2 {
			raw, _ = json.Marshal(map[string]string{f[0]: f[1]})
		} else {
			raw, _ = json.Marshal(map[string][]string{f[0]: f[1:]})
		}
		steps = append(steps, raw)
	}
	e.setup(t, steps)
	mode := c.mode
	if mode == "" {
		mode = "default"
	}
	tc := tableCase{Name: c.name, RulesAllow: c.allow, RulesDeny: c.deny, Mode: mode, Tool: "Bash"}
	input, _ := json.Marshal(map[string]string{"command": c.cmd})
	d := e.checker(t, tc).Decide(context.Background(), Call{Tool: "Bash", Input: e.input(t, input)})
	if diff := cmp.Diff(c.want, d.Behavior); diff != "" {
		t.Errorf("%s: %s (-want +got):\n%s", c.cmd, d.Message, diff)
	}
	if d.Behavior != Allow && d.Message == "" {
		t.Errorf("%s without a message", d.Behavior)
	}
}

func runROCases(t *testing.T, cases []roCase) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Fatalf("duplicate case %q", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, c.run)
	}
}

// secretLayout is a working directory with a source tree, a directory
// that a Read deny rule covers, and a file outside.
var secretLayout = []string{"file src/a.go package a", "file secrets/key TOPSECRET", "file f.json {\"a\":1}",
	"file f hello", "file $OUT/s outside", "file notes.txt foo"}

const denySecrets = "Read(./secrets/**)"

// TestGitReadOnly: git is read-only only in its reading forms.
func TestGitReadOnly(t *testing.T) {
	runROCases(t, []roCase{
		// Ordinary use.
		{name: "status", cmd: "git status", want: Allow},
		{name: "log oneline", cmd: "git log --oneline -5", want: Allow},
		{name: "diff rev path", setup: secretLayout, cmd: "git diff HEAD~1 -- src", want: Allow},
		{name: "branch", cmd: "git branch", want: Allow},
		{name: "branch -a", cmd: "git branch -a", want: Allow},
		{name: "branch -vv", cmd: "git branch -vv", want: Allow},
		{name: "branch --list pattern", cmd: "git branch --list 'feat/*'", want: Allow},
		{name: "branch --contains", cmd: "git branch --contains HEAD", want: Allow},
		{name: "branch --show-current", cmd: "git branch --show-current", want: Allow},
		{name: "tag -l", cmd: "git tag -l", want: Allow},
		{name: "tag -n5", cmd: "git tag -n5", want: Allow},
		{name: "tag --list pattern", cmd: "git tag --list 'v1.*' --sort=-version:refname", want: Allow},
		{name: "remote -v", cmd: "git remote -v", want: Allow},
		{name: "remote get-url", cmd: "git remote get-url origin", want: Allow},
		{name: "remote show -n", cmd: "git remote show -n origin", want: Allow},
		{name: "config get", cmd: "git config --get user.name", want: Allow},
		{name: "config list", cmd: "git config --list --show-origin", want: Allow},
		{name: "config get subcommand", cmd: "git config get user.email", want: Allow},
		{name: "show rev:path", cmd: "git show HEAD:src/a.go", want: Allow},
		{name: "log -p stat", cmd: "git log -p --stat -3 --format='%h %s'", want: Allow},
		{name: "stash list", cmd: "git stash list", want: Allow},
		{name: "grep", cmd: "git grep -n foo", want: Allow},
		{name: "blame", setup: secretLayout, cmd: "git blame src/a.go", want: Allow},
		{name: "C into a subdirectory", setup: secretLayout, cmd: "git -C src log --oneline", want: Allow},
		{name: "no-pager", cmd: "git --no-pager log -1", want: Allow},
		{name: "output indicator", cmd: "git diff --output-indicator-new=N", want: Allow},
		{name: "reflog", cmd: "git reflog -n 5", want: Allow},
		{name: "worktree list", cmd: "git worktree list", want: Allow},
		{name: "exec-path prints", cmd: "git --exec-path", want: Allow},

		// Options that carry commands or configuration.
		{name: "-c pager", cmd: "git -c core.pager='touch pwned' log", want: Ask},
		{name: "-c attached", cmd: "git -ccore.pager=x log", want: Ask},
		{name: "config-env", cmd: "git --config-env=core.pager=EVIL log", want: Ask},
		{name: "exec-path set", cmd: "git --exec-path=/tmp log", want: Ask},
		{name: "git-dir", cmd: "git --git-dir=planted log", want: Ask},
		{name: "work-tree", cmd: "git --work-tree=/ status", want: Ask},
		{name: "grep -O", cmd: "git grep -O'touch pwned' foo", want: Ask},
		{name: "grep -O in cluster", cmd: "git grep -iOtouch foo", want: Ask},
		{name: "grep open-files-in-pager", cmd: "git grep --open-files-in-pager=vi foo", want: Ask},
		{name: "grep open abbreviated", cmd: "git grep --open=vi foo", want: Ask},
		{name: "diff ext-diff", cmd: "git diff --ext-diff", want: Ask},
		{name: "diff ext abbreviated", cmd: "git diff --ext", want: Ask},
		{name: "log textconv", cmd: "git log -p --textconv", want: Ask},
		{name: "cat-file filters", cmd: "git cat-file --filters HEAD:a", want: Ask},
		{name: "log output", cmd: "git log --output=pwned", want: Ask},
		{name: "diff output abbreviated", cmd: "git diff --outpu pwned", want: Ask},
		{name: "GIT_DIR prefix", cmd: "GIT_DIR=planted git status", want: Ask},
		{name: "GIT_EXTERNAL_DIFF prefix", cmd: "GIT_EXTERNAL_DIFF=./evil git diff", want: Ask},
		{name: "env GIT_PAGER", cmd: "env GIT_PAGER='touch pwned' git log", want: Ask},
		{name: "GIT_CONFIG assignment before", cmd: "GIT_CONFIG_COUNT=1; git log", want: Ask},
		{name: "export GIT_PAGER allowed", allow: []string{"Bash(export:*)"}, cmd: "export GIT_PAGER='touch pwned'; git log", want: Ask},

		// Subcommands that write or reach the network.
		{name: "remote add", cmd: "git remote add x https://example.com/r", want: Ask},
		{name: "remote set-url", cmd: "git remote set-url origin https://example.com/r", want: Ask},
		{name: "remote remove", cmd: "git remote remove origin", want: Ask},
		{name: "remote rename", cmd: "git remote rename a b", want: Ask},
		{name: "remote prune", cmd: "git remote prune origin", want: Ask},
		{name: "remote show queries", cmd: "git remote show origin", want: Ask},
		{name: "remote -v show", cmd: "git remote -v show https://example.com/r", want: Ask},
		{name: "ls-remote", cmd: "git ls-remote origin", want: Ask},
		{name: "fetch", cmd: "git fetch", want: Ask},
		{name: "archive remote", cmd: "git archive --remote=x HEAD", want: Ask},
		{name: "branch create", cmd: "git branch newb", want: Ask},
		{name: "branch -v create", cmd: "git branch -v newb", want: Ask},
		{name: "branch column create", cmd: "git branch --column newb", want: Ask},
		{name: "branch color create", cmd: "git branch --color newb", want: Ask},
		{name: "branch abbrev create", cmd: "git branch --abbrev newb", want: Ask},
		{name: "branch delete", cmd: "git branch -d old", want: Ask},
		{name: "branch delete abbreviated", cmd: "git branch --del old", want: Ask},
		{name: "branch set-upstream abbreviated", cmd: "git branch --set-upst=origin/x", want: Ask},
		{name: "branch -a create", cmd: "git branch -a newb", want: Ask},
		{name: "tag create", cmd: "git tag v9", want: Ask},
		{name: "tag column create", cmd: "git tag --column v9", want: Ask},
		{name: "tag delete", cmd: "git tag -d v1", want: Ask},
		{name: "tag -n create", cmd: "git tag -n v9", want: Ask},
		{name: "config set", cmd: "git config user.name x", want: Ask},
		{name: "config add", cmd: "git config --add a.b c", want: Ask},
		{name: "config get with replace abbreviated", cmd: "git config --get a.b --repl c", want: Ask},
		{name: "config file write", cmd: "git config -f pwned a.b c", want: Ask},
		{name: "stash push", cmd: "git stash", want: Ask},
		{name: "stash pop", cmd: "git stash pop", want: Ask},
		{name: "worktree add", cmd: "git worktree add ../x", want: Ask},
		{name: "notes add", cmd: "git notes add -m x", want: Ask},
		{name: "update-ref", cmd: "git update-ref refs/heads/x HEAD", want: Ask},
		{name: "reflog expire", cmd: "git reflog expire --all", want: Ask},
		{name: "reflog option then expire", cmd: "git reflog -n1 expire", want: Ask},
		{name: "gc", cmd: "git gc", want: Ask},
		{name: "unknown subcommand", cmd: "git st", want: Ask},

		// Reads past deny rules or outside the working directories.
		{name: "diff outside", setup: secretLayout, cmd: "git diff $OUT/s f", want: Ask},
		{name: "diff no-index outside", setup: secretLayout, cmd: "git diff --no-index f $OUT/s", want: Ask},
		{name: "diff denied", setup: secretLayout, deny: []string{denySecrets}, cmd: "git diff --no-index f secrets/key", want: Deny},
		{name: "diff denied tree", setup: secretLayout, deny: []string{denySecrets}, cmd: "git diff --no-index . src", want: Ask},
		{name: "blame contents outside", setup: secretLayout, cmd: "git blame --contents $OUT/s f", want: Ask},
		{name: "blame contents= outside", setup: secretLayout, cmd: "git blame --contents=$OUT/s f", want: Ask},
		{name: "blame contents denied", setup: secretLayout, deny: []string{denySecrets}, cmd: "git blame --contents=secrets/key f", want: Deny},
		{name: "blame -S outside", setup: secretLayout, cmd: "git blame -S$OUT/s f", want: Ask},
		{name: "grep untracked denied", setup: secretLayout, deny: []string{denySecrets}, cmd: "git grep --untracked TOP", want: Ask},
		{name: "grep no-index denied", setup: secretLayout, deny: []string{denySecrets}, cmd: "git grep --no-index TOP", want: Ask},
		{name: "grep no-index outside", setup: secretLayout, cmd: "git grep --no-index foo $OUT", want: Ask},
		{name: "grep -f outside", setup: secretLayout, cmd: "git grep -f$OUT/s", want: Ask},
		{name: "config -f outside", setup: secretLayout, cmd: "git config -f $OUT/s --list", want: Ask},
		{name: "config --file= outside", setup: secretLayout, cmd: "git config --file=$OUT/s -l", want: Ask},
		{name: "config -f denied", setup: secretLayout, deny: []string{denySecrets}, cmd: "git config -f secrets/key -l", want: Deny},
		{name: "C outside", setup: secretLayout, cmd: "git -C $OUT log", want: Ask},
		{name: "C parent", cmd: "git -C .. status", want: Ask},
		{name: "C then relative operand", setup: secretLayout, cmd: "git -C src diff --no-index a.go ../../out/s", want: Ask},
		{name: "diff orderfile outside", setup: secretLayout, cmd: "git diff -O$OUT/s", want: Ask},
		{name: "log path outside", setup: secretLayout, cmd: "git log -- $OUT/s", want: Ask},
		{name: "ls-files exclude-from outside", setup: secretLayout, cmd: "git ls-files --exclude-from=$OUT/s", want: Ask},
	})
}

// TestReadOnlyCommandsHidden: jq, grep, sort, uniq, tree, date, find and
// the checksum tools with options that read elsewhere, write or run.
func TestReadOnlyCommandsHidden(t *testing.T) {
	runROCases(t, []roCase{
		// Ordinary use.
		{name: "jq", setup: secretLayout, cmd: "jq .a f.json", want: Allow},
		{name: "jq cluster", setup: secretLayout, cmd: "jq -rc '.a' f.json", want: Allow},
		{name: "jq rawfile inside", setup: secretLayout, cmd: "jq -n --rawfile x f '$x'", want: Allow},
		{name: "jq name containing import", setup: secretLayout, cmd: "jq .important f.json", want: Allow},
		{name: "grep -rn", setup: secretLayout, cmd: "grep -rn foo src", want: Allow},
		{name: "grep -rn with deny elsewhere", setup: secretLayout, deny: []string{denySecrets}, cmd: "grep -rn foo src", want: Allow},
		{name: "grep -r cwd without deny", setup: secretLayout, cmd: "grep -r foo", want: Allow},
		{name: "grep -e", setup: secretLayout, cmd: "grep -e foo -e bar notes.txt", want: Allow},
		{name: "grep context digits", setup: secretLayout, cmd: "grep -3 -n foo notes.txt", want: Allow},
		{name: "grep abbreviated flag", setup: secretLayout, cmd: "grep --line-n --ignore-c foo notes.txt", want: Allow},
		{name: "sort abbreviated flag", setup: secretLayout, cmd: "sort --rev --numeric f", want: Allow},
		{name: "grep include", setup: secretLayout, cmd: "grep -rn --include='*.go' foo src", want: Allow},
		{name: "sed -n", setup: secretLayout, cmd: "sed -n 1,5p f", want: Allow},
		{name: "sort uniq", setup: secretLayout, cmd: "sort f | uniq -c", want: Allow},
		{name: "sort keys", setup: secretLayout, cmd: "sort -t, -k2 -rn f", want: Allow},
		{name: "date format", cmd: "date +%Y-%m-%d", want: Allow},
		{name: "date -u", cmd: "date -u --iso-8601=seconds", want: Allow},
		{name: "find names", setup: secretLayout, cmd: "find src -name '*.go' -type f", want: Allow},
		{name: "rg", setup: secretLayout, cmd: "rg foo src", want: Allow},
		{name: "diff files", setup: secretLayout, cmd: "diff f notes.txt", want: Allow},
		{name: "tree", setup: secretLayout, cmd: "tree -L 2 src", want: Allow},
		{name: "sha256sum", setup: secretLayout, cmd: "sha256sum f", want: Allow},

		// jq.
		{name: "jq import", setup: secretLayout, cmd: `jq 'import "m" as m; .' f.json`, want: Ask},
		{name: "jq include", setup: secretLayout, cmd: `jq 'include "m"; .' f.json`, want: Ask},
		{name: "jq modulemeta", setup: secretLayout, cmd: `jq -n '"m" | modulemeta'`, want: Ask},
		{name: "jq -L", setup: secretLayout, cmd: "jq -L $OUT . f.json", want: Ask},
		{name: "jq --library-path", setup: secretLayout, cmd: "jq --library-path $OUT . f.json", want: Ask},
		{name: "jq rawfile outside", setup: secretLayout, cmd: "jq -n --rawfile x $OUT/s '$x'", want: Ask},
		{name: "jq slurpfile denied", setup: secretLayout, deny: []string{denySecrets}, cmd: "jq -n --slurpfile x secrets/key '$x'", want: Deny},
		{name: "jq -f", setup: secretLayout, cmd: "jq -f prog.jq f.json", want: Ask},
		{name: "jq --from-file", setup: secretLayout, cmd: "jq --from-file prog.jq f.json", want: Ask},
		{name: "jq args operands outside", setup: secretLayout, cmd: "jq . f.json $OUT/s", want: Ask},

		// grep.
		{name: "grep -r into denied", setup: secretLayout, deny: []string{denySecrets}, cmd: "grep -r TOP .", want: Ask},
		{name: "grep -r cwd denied inside", setup: secretLayout, deny: []string{denySecrets}, cmd: "grep -rn TOP", want: Ask},
		{name: "grep -d recurse", setup: secretLayout, deny: []string{denySecrets}, cmd: "grep -d recurse TOP .", want: Ask},
		{name: "grep --directories=recurse", setup: secretLayout, deny: []string{denySecrets}, cmd: "grep --directories=recurse TOP .", want: Ask},
		{name: "grep --dir=recurse abbreviated", setup: secretLayout, deny: []string{denySecrets}, cmd: "grep --dir=recurse TOP .", want: Ask},
		{name: "grep -r anywhere rule", setup: append([]string{"file src/.env K=1"}, secretLayout...), deny: []string{"Read(.env)"}, cmd: "grep -r K src", want: Ask},
		{name: "grep -r anywhere rule absent", setup: secretLayout, deny: []string{"Read(.env)"}, cmd: "grep -r K src", want: Allow},
		{name: "grep -R", setup: secretLayout, cmd: "grep -R foo src", want: Ask},
		{name: "grep -f outside", setup: secretLayout, cmd: "grep -f $OUT/s f", want: Ask},
		{name: "grep -f attached denied", setup: secretLayout, deny: []string{denySecrets}, cmd: "grep -fsecrets/key f", want: Deny},
		{name: "grep exclude-from outside", setup: secretLayout, cmd: "grep --exclude-from=$OUT/s foo f", want: Ask},
		{name: "grep abbreviated regexp", setup: secretLayout, cmd: "grep --reg=x $OUT/s", want: Ask},
		{name: "grep unknown option", setup: secretLayout, cmd: "grep --frobnicate foo f", want: Ask},
		{name: "grep expansion", setup: secretLayout, cmd: "grep $X foo secrets", want: Ask},
		{name: "rg denied tree", setup: secretLayout, deny: []string{denySecrets}, cmd: "rg TOP", want: Ask},

		// sort, uniq, tree, date.
		{name: "sort -o", setup: secretLayout, cmd: "sort -o out.txt f", want: Ask},
		{name: "sort --output abbreviated", setup: secretLayout, cmd: "sort --outp=out.txt f", want: Ask},
		{name: "sort compress-program", setup: secretLayout, cmd: "sort --compress-program=sh f", want: Ask},
		{name: "sort compress abbreviated", setup: secretLayout, cmd: "sort --compress=sh f", want: Ask},
		{name: "sort -T", setup: secretLayout, cmd: "sort -T /tmp f", want: Ask},
		{name: "sort files0-from", setup: secretLayout, cmd: "sort --files0-from=list", want: Ask},
		{name: "sort random-source outside", setup: secretLayout, cmd: "sort -R --random-source=$OUT/s f", want: Ask},
		{name: "sort unknown", setup: secretLayout, cmd: "sort --frobnicate f", want: Ask},
		{name: "uniq output operand", setup: secretLayout, cmd: "uniq f out.txt", want: Ask},
		{name: "tree -o", setup: secretLayout, cmd: "tree -o out.txt", want: Ask},
		{name: "tree -R", setup: secretLayout, cmd: "tree -R -H . -L 1", want: Ask},
		{name: "tree fromfile", setup: secretLayout, cmd: "tree --fromfile list", want: Ask},
		{name: "date -s", cmd: "date -s 2020-01-01", want: Ask},
		{name: "date --set abbreviated", cmd: "date --se=2020-01-01", want: Ask},
		{name: "date -f", cmd: "date -f dates.txt", want: Ask},
		{name: "date sets clock operand", cmd: "date 0101000025", want: Ask},
		{name: "date reference outside", setup: secretLayout, cmd: "date --ref=$OUT/s", want: Ask},

		// Others of the set.
		{name: "find fprint", setup: secretLayout, cmd: "find . -fprint out.txt", want: Ask},
		{name: "find files0-from", setup: secretLayout, cmd: "find -files0-from list", want: Ask},
		{name: "md5sum -c", setup: secretLayout, cmd: "md5sum -c sums.txt", want: Ask},
		{name: "sha256sum --check abbreviated", setup: secretLayout, cmd: "sha256sum --ch sums.txt", want: Ask},
		{name: "wc files0-from", setup: secretLayout, cmd: "wc --files0-from=list", want: Ask},
		{name: "du files0-from", setup: secretLayout, cmd: "du --files0-from=list", want: Ask},
		{name: "file compile", setup: secretLayout, cmd: "file -C -m magic", want: Ask},
		{name: "diff -r into denied", setup: secretLayout, deny: []string{denySecrets}, cmd: "diff -r . src", want: Ask},
		{name: "diff to-file outside", setup: secretLayout, cmd: "diff --to-file=$OUT/s f", want: Ask},
		{name: "tee", setup: secretLayout, cmd: "echo x | tee out.txt", want: Ask},
		{name: "env with command", cmd: "env X=1 ls", want: Ask},
	})
}
