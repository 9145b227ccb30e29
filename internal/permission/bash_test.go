package permission

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// names lists the command names (allow forms) a command line splits into.
func names(a *bashAnalysis) []string {
	var out []string
	for _, c := range a.cmds {
		if len(c.args) == 0 {
			out = append(out, "=")
			continue
		}
		f, _ := allowForm(c.args)
		out = append(out, f[0].canon(false))
	}
	return out
}

func TestSplit(t *testing.T) {
	tests := []struct {
		cmd  string
		want []string
	}{
		{"a; b && c || d | e |& f & g", []string{"a", "b", "c", "d", "e", "f", "g"}},
		{"a\nb", []string{"a", "b"}},
		{"(a; b) && { c; }", []string{"a", "b", "c"}},
		{"echo $(a `b`) <(c) >(d)", []string{"b", "a", "c", "d", "echo"}},
		{"if a; then b; elif c; then d; else e; fi", []string{"a", "b", "c", "d", "e"}},
		{"for x in $(a); do b; done; while c; do d; done", []string{"a", "b", "c", "d"}},
		{"case $(a) in x) b;; esac", []string{"a", "b"}},
		{"cat <<EOF\n$(a)\nEOF", []string{"a", "cat"}},
		{"eval 'a; b'", []string{"eval", "a", "b"}},
		{"bash -c 'a && b' x", []string{"bash", "a", "b"}},
		{"timeout 5 nice -n 1 a x", []string{"a"}},
		{"xargs a", []string{"a"}},
		{"x=1 y=2", []string{"="}},
		{"time a", []string{"a"}},
		{"! a", []string{"a"}},
		{"[[ -f $(a) ]]", []string{"a"}},
		{"echo ${x:-$(a)}", []string{"a", "echo"}},
		{"sudo sh -c 'a'", []string{"sudo", "a"}},
	}
	for _, tt := range tests {
		a := analyzeBash(tt.cmd, "/w", "/h")
		if diff := cmp.Diff(tt.want, names(a)); diff != "" {
			t.Errorf("%q (-want +got):\n%s (problems %q)", tt.cmd, diff, a.problems)
		}
	}
}

func TestProblems(t *testing.T) {
	for _, cmd := range []string{
		"$X y", "${X} y", "$(a) y", "`a` y", "x$(a) y", "*.sh", "{a,b}", "f() { a; }", "function f { a; }", "((x++))",
		"echo $((1+2))", "let x=1", "declare x=1", "export X=1", "local x", "alias a=b", "shopt -s x", "source f", ". f",
		"eval $x", "bash -c \"$x\"", "coproc a", "select x in a; do b; done", "for ((i=0;i<2;i++)); do a; done",
		"echo ${!x}", "echo ${x:1:2}", "echo ${x@P}", "echo ${x:=y}", "echo ${a[$i]}", "a[1]=x", "x+=1",
		"[[ $x -eq 1 ]]", "[[ -v x ]]", "read PATH", "for PATH in .; do a; done", "trap a EXIT", "echo \"unterminated",
		"echo a\rb", "echo a\u200bb", "exec 3>&-; exec {fd}>x", "set -k", "unset x", "hash -p /x ls", "mapfile x",
	} {
		if a := analyzeBash(cmd, "/w", "/h"); len(a.problems) == 0 {
			t.Errorf("%q: want a problem", cmd)
		}
	}
	for _, cmd := range []string{
		"ls -la", "echo \"$HOME\" '$x' $'\\x41'", "a && b || c", "x=1; echo $x", "for f in *.go; do echo \"$f\"; done",
		"cat <<'EOF'\n$(x)\nEOF", "set -euo pipefail", "read -r line", "[[ -f x && $y == z ]]", "exec >/dev/null",
		"command -v ls", "echo ${x:-y} ${#x} ${x%.go} ${x//a/b} ${x^^}", "cd ~/x", "echo {}", "find . -exec a {} \\;",
	} {
		if a := analyzeBash(cmd, "/w", "/h"); len(a.problems) != 0 {
			t.Errorf("%q: unexpected problems %q", cmd, a.problems)
		}
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		kind wordKind
		text string
	}{
		{`'git'`, wordLiteral, "git"},
		{`g"it"`, wordLiteral, "git"},
		{`git\ status`, wordLiteral, "git status"},
		{`"a\$b\"c\\d\e"`, wordLiteral, `a$b"c\d\e`},
		{`$'\x72m\n'`, wordLiteral, "rm\n"},
		{`$'\u0433'`, wordLiteral, "г"},
		{`~`, wordTilde, ""},
		{`~/x`, wordTilde, "/x"},
		{`~user/x`, wordUnknown, ""},
		{`a=~/x`, wordUnknown, ""},
		{`*.go`, wordGlob, "*.go"},
		{`\*.go`, wordLiteral, "*.go"},
		{`"*.go"`, wordLiteral, "*.go"},
		{`[ab]`, wordUnknown, ""},
		{`[`, wordLiteral, "["},
		{`{a,b}`, wordUnknown, ""},
		{`{a..c}`, wordUnknown, ""},
		{`{}`, wordLiteral, "{}"},
		{`$x`, wordUnknown, ""},
		{`"$x"`, wordUnknown, ""},
		{`$"x"`, wordUnknown, ""},
	}
	for _, tt := range tests {
		a := &analyzer{}
		a.parse("echo " + tt.in)
		if len(a.cmds) != 1 || len(a.cmds[0].args) != 2 {
			t.Errorf("%q did not parse as one word", tt.in)
			continue
		}
		w := a.cmds[0].args[1]
		if w.kind != tt.kind || tt.kind != wordUnknown && w.text != tt.text {
			t.Errorf("%q = kind %d text %q, want kind %d text %q", tt.in, w.kind, w.text, tt.kind, tt.text)
		}
	}
}

func TestCdTracking(t *testing.T) {
	tests := []struct {
		cmd  string
		want []string // cwds of the last command; nil = unknown
	}{
		{"ls", []string{"/w"}},
		{"cd sub && ls", []string{"/w", "/w/sub"}},
		{"cd /tmp/x; ls", []string{"/w", "/tmp/x"}},
		{"cd; ls", []string{"/w", "/h"}},
		{"cd ~/p; ls", []string{"/w", "/h/p"}},
		{"cd -; ls", nil},
		{"cd $d; ls", nil},
		{"pushd x; ls", nil},
		{"for i in 1; do ls; cd ..; done", nil},
		{"(cd a); ls", []string{"/w", "/w/a"}},
	}
	for _, tt := range tests {
		a := analyzeBash(tt.cmd, "/w", "/h")
		last := a.cmds[len(a.cmds)-1]
		if diff := cmp.Diff(tt.want, last.cwds); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.cmd, diff)
		}
	}
	// In a loop, commands before the cd run after it on the next turn.
	a := analyzeBash("for i in 1 2; do cat f; cd ..; done", "/w", "/h")
	if a.cmds[0].cwds != nil {
		t.Errorf("cat in a loop with cd should have an unknown directory, got %q", a.cmds[0].cwds)
	}
}

func TestReadOnlyCommands(t *testing.T) {
	ro := []string{
		"ls", "ls -la src", "cat a b", "head -n 5 a", "tail -f log", "wc -l a", "grep -rn foo .", "grep -e x -e y a",
		"rg foo src", "rg --files", "find . -name '*.go' -type f", "find src -newer a", "git status", "git log --oneline",
		"git diff HEAD~1", "git show HEAD:a", "git branch", "git branch -a -v", "git branch --list 'f*'", "git tag -l",
		"git remote -v", "git config --get user.name", "git stash list", "git -C sub status", "git --no-pager log",
		"echo a", "printf '%s\\n' a", "pwd", "which go", "sort -u a", "uniq a", "sed -n '1,5p' a", "sed 's/a/b/g;s|c|d|' a",
		"sed -E -e 's/(a)/\\1/2' a", "jq '.x' a.json", "jq -r --arg k v '.[$k]' a", "diff a b", "stat a", "du -sh .",
		"test -f a", "[ -n \"$x\" ]", "[ \"$a\" = \"$b\" ]", "env", "true", "date +%s", "tree -L 2", "command -v go",
		"cd x", "set -e", "read -r x", "tee", "base64 a", "sha256sum a", "cut -d, -f1 a", "tr a-z A-Z", "file a",
	}
	not := []string{
		"rm a", "touch a", "ls | tee out", "sort -o out a", "sort --output=out a", "sort -T /tmp a", "uniq a out",
		"find . -delete", "find . -exec ls \\;", "find . -execdir ls \\;", "find . -ok ls \\;", "find . -fprint f",
		"find . $x", "git commit -m x", "git push", "git branch new", "git branch -D x", "git tag v1", "git -c x=y log",
		"git --git-dir=x log", "git diff --output=f", "git log --output f", "git diff --ext-diff", "git grep -Oless x",
		"git config user.name x", "git stash", "git checkout x", "git remote add o u", "git reflog expire",
		"sed -i s/a/b/ a", "sed -ni p a", "sed --in-place s/a/b/ a", "sed 's/a/b/w f' a", "sed 'w f' a", "sed e a",
		"sed 's/a/b/e' a", "sed -f s a", "sed \"$s\" a", "sed 'r /etc/passwd' a", "printf -v x a", "printf $f a",
		"test -v x", "[ -v x ]", "[ $x ]", "date -s now", "hostname x", "env rm", "rg --pre x y", "rg --pre=x y",
		"rg $x y", "tree -o f", "file -C", "awk 1", "xxd a", "less a", "python -c 1", "/bin/ls", "./ls", "node x",
		"dd if=a of=b", "tee f",
	}
	for _, cmd := range ro {
		a := analyzeBash(cmd, "/w", "/h")
		f, _ := allowForm(a.cmds[0].args)
		if !readOnlyCheck(f).ok {
			t.Errorf("%q should be read-only", cmd)
		}
	}
	for _, cmd := range not {
		a := analyzeBash(cmd, "/w", "/h")
		for _, c := range a.cmds {
			f, _ := allowForm(c.args)
			if len(f) > 0 && readOnlyCheck(f).ok && (!strings.HasPrefix(cmd, "ls |") || f[0].text == "tee") {
				t.Errorf("%q should not be read-only (part %q)", cmd, f[0].text)
			}
		}
	}
}

func TestSedScripts(t *testing.T) {
	for _, s := range []string{"p", "1,5p", "$p", "/re/p", "/a\\/b/d", "s/a/b/", "s/a/b/g", "s|a|b|gI", "s/a\\/b/c/2",
		"1d;2d", "y/abc/xyz/", "/x/!d", "=", "q", "q5", "1~2p", "2,+3p", "N;P;D", "s/a;b/c/"} {
		if !sedScriptSafe(s) {
			t.Errorf("%q should be safe", s)
		}
	}
	for _, s := range []string{"w f", "s/a/b/w f", "s/a/b/e", "e ls", "r f", "R f", "W f", "1e ls", "a text", "i\\",
		"c x", "{p}", "s/a/b", "p w f", "s/a/b/gw f", ":a;ba", "F", "v", "z;e ls", "s\na\nb\n"} {
		if sedScriptSafe(s) {
			t.Errorf("%q should not be safe", s)
		}
	}
}

func TestFSCommands(t *testing.T) {
	// cp and mv write DEST and DEST/base(SOURCE); mv also removes SOURCE.
	yes := map[string]int{"mkdir -p a/b": 1, "touch a b": 2, "rm -rf a": 1, "rmdir a": 1, "mv a b": 3, "cp -r a b": 2,
		"cp -t dir a": 2, "sed -i 's/a/b/' f": 1, "touch -r ref a": 1, "mv --target-directory=d a": 3,
		"sed -i.bak 's/a/b/' f": 2, "cp --parents a/b d": 2}
	for cmd, n := range yes {
		a := analyzeBash(cmd, "/w", "/h")
		fs, ok := parseFSCommand(a.cmds[0].args)
		if !ok || len(fs.writes) != n {
			t.Errorf("%q: ok=%v writes=%d, want %d", cmd, ok, len(fs.writes), n)
		}
	}
	for _, cmd := range []string{"cp -s a b", "cp -l a b", "cp --link a b", "rm --no-preserve-root a", "ln -s a b", "mkdir",
		"sed 's/a/b/' f", "sed -i 'w x' f", "rm $(ls)x -f", "chmod 777 a", "install a b"} {
		a := analyzeBash(cmd, "/w", "/h")
		if _, ok := parseFSCommand(a.cmds[len(a.cmds)-1].args); ok && !strings.Contains(cmd, "$(") {
			t.Errorf("%q should not be an acceptEdits filesystem command", cmd)
		}
	}
}
