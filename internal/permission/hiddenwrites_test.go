package permission

import (
	"testing"
)

// TestHiddenWrites: sed backups, cp --parents and destinations, options
// of archive and sync tools (class 3).
func TestHiddenWrites(t *testing.T) {
	ae := "acceptEdits"
	runROCases(t, []roCase{
		{name: "sed -i backup inside", mode: ae, setup: secretLayout, cmd: "sed -i.bak 's/a/b/' f", want: Allow},
		{name: "sed -i tilde backup", mode: ae, setup: secretLayout, cmd: "sed -i~ 's/a/b/' f", want: Allow},
		{name: "sed -i star prefix", mode: ae, setup: secretLayout, cmd: "sed -i'old_*' 's/a/b/' f", want: Allow},
		{name: "sed -i backup outside", mode: ae, setup: secretLayout, cmd: "sed -i'$OUT/*' 's/a/b/' f", want: Ask},
		{name: "sed -i backup outside from subdirectory file", mode: ae, setup: secretLayout, cmd: "sed -i'$OUT/*' 's/a/b/' src/a.go", want: Ask},
		{name: "sed -i backup parent", mode: ae, setup: secretLayout, cmd: "sed -i'../*' 's/a/b/' f", want: Ask},
		{name: "sed in-place= backup outside", mode: ae, setup: secretLayout, cmd: "sed --in-place=$OUT/* 's/a/b/' f", want: Ask},
		{name: "sed -i backup protected", mode: ae, setup: secretLayout, cmd: "sed -i'.git/*' 's/a/b/' f", want: Ask},
		{name: "sed -i backup slash suffix", mode: ae, setup: secretLayout, cmd: "sed -i/../../x 's/a/b/' f", want: Ask},
		{name: "sed -i backup denied", mode: ae, setup: secretLayout, deny: []string{denySecrets}, cmd: "sed -i'secrets/*' 's/a/b/' f", want: Deny},
		{name: "sed -i template on unknown file", mode: ae, setup: secretLayout, cmd: "sed -i'x/*' 's/a/b/' \"$F\"", want: Ask},

		{name: "mkdir and cp", mode: ae, setup: secretLayout, cmd: "mkdir -p build && cp src/a.go build/", want: Allow},
		{name: "mkdir and mv", mode: ae, setup: secretLayout, cmd: "mkdir -p out && mv f out/", want: Allow},
		{name: "cp then mkdir", mode: ae, setup: secretLayout, cmd: "cp -r src build && mkdir -p build/x", want: Ask},
		{name: "mkdir alongside cp", mode: ae, setup: secretLayout, cmd: "mkdir -p build/l/x & cp -a src build", want: Ask},
		{name: "mkdir piped into cp", mode: ae, setup: secretLayout, cmd: "mkdir -p build/l/x | cp -a src build", want: Ask},
		{name: "mkdir and cp in a loop", mode: ae, setup: secretLayout, cmd: "for i in 1 2; do mkdir -p b/l; cp -a src b; done", want: Ask},
		{name: "cp reads protected source", mode: ae, setup: append([]string{"file .git/config [core]"}, secretLayout...), cmd: "cp .git/config snapshot.txt", want: Allow},
		{name: "cp parents protected", mode: ae, setup: append([]string{"file .git/config [core]", "mkdir snapshot"}, secretLayout...), cmd: "cp --parents .git/config snapshot/", want: Ask},
		{name: "cp into home", mode: ae, setup: secretLayout, cmd: "cp f ~/", want: Ask},
		{name: "cp dest protected name", mode: ae, setup: append([]string{"file x/.bashrc evil"}, secretLayout...), cmd: "cp -t . x/.bashrc", want: Ask},
		{name: "cp -r denied source", mode: ae, setup: secretLayout, deny: []string{denySecrets}, cmd: "cp -r . ../out/copy", want: Ask},
		{name: "cp -r denied source inside", mode: ae, setup: secretLayout, deny: []string{denySecrets}, cmd: "cp -r . backup", want: Ask},
		{name: "mv -t outside", mode: ae, setup: secretLayout, cmd: "mv -t $OUT f", want: Ask},

		{name: "tar allowed", allow: []string{"Bash(tar:*)"}, setup: secretLayout, cmd: "tar -cf x.tar src", want: Allow},
		{name: "tar checkpoint exec", allow: []string{"Bash(tar:*)"}, setup: secretLayout, cmd: "tar -cf x.tar --checkpoint=1 --checkpoint-action=exec='touch pwned' src", want: Ask},
		{name: "tar use-compress-program", allow: []string{"Bash(tar:*)"}, setup: secretLayout, cmd: "tar -I 'sh -c id' -cf x.tar src", want: Ask},
		{name: "tar to-command", allow: []string{"Bash(tar:*)"}, setup: secretLayout, cmd: "tar -xf x.tar --to-command='sh'", want: Ask},
		{name: "tar old style info script", allow: []string{"Bash(tar:*)"}, setup: secretLayout, cmd: "tar cfF x.tar evil.sh src", want: Ask},
		{name: "tar remove-files", allow: []string{"Bash(tar:*)"}, setup: secretLayout, cmd: "tar -cf x.tar --remove-files src", want: Ask},
		{name: "tar extract into denied", allow: []string{"Bash(tar:*)"}, deny: []string{"Edit(./src/**)"}, setup: secretLayout, cmd: "tar -xf x.tar -C src", want: Deny},
		{name: "tar extract protected", allow: []string{"Bash(tar:*)"}, setup: secretLayout, cmd: "tar -xf x.tar -C .git/hooks", want: Ask},
		{name: "rsync -e", allow: []string{"Bash(rsync:*)"}, setup: secretLayout, cmd: "rsync -e 'touch pwned' f h:x", want: Ask},
		{name: "rsync rsync-path", allow: []string{"Bash(rsync:*)"}, setup: secretLayout, cmd: "rsync --rsync-path='sh -c id' f h:x", want: Ask},
		{name: "rsync delete", allow: []string{"Bash(rsync:*)"}, setup: secretLayout, cmd: "rsync -a --delete src/ backup/", want: Ask},
		{name: "rsync remove-source-files", allow: []string{"Bash(rsync:*)"}, setup: secretLayout, cmd: "rsync -a --remove-source-files src/ backup/", want: Ask},
		{name: "rsync plain", allow: []string{"Bash(rsync:*)"}, setup: secretLayout, cmd: "rsync -a src/ backup/", want: Allow},
		{name: "rsync dest denied", allow: []string{"Bash(rsync:*)"}, deny: []string{"Edit(./src/**)"}, setup: secretLayout, cmd: "rsync -a f src/", want: Deny},
		{name: "zip -TT", allow: []string{"Bash(zip:*)"}, setup: secretLayout, cmd: "zip -T -TT 'touch pwned' x.zip f", want: Ask},
		{name: "curl -o protected", allow: []string{"Bash(curl:*)"}, setup: secretLayout, cmd: "curl -o ~/.bashrc https://example.com/x", want: Ask},
		{name: "curl -o denied", allow: []string{"Bash(curl:*)"}, deny: []string{"Edit(./src/**)"}, setup: secretLayout, cmd: "curl --output=src/a.go https://example.com/x", want: Deny},
		{name: "curl -K", allow: []string{"Bash(curl:*)"}, setup: secretLayout, cmd: "curl -K cfg https://example.com/x", want: Ask},
		{name: "wget -O protected", allow: []string{"Bash(wget:*)"}, setup: secretLayout, cmd: "wget -O .git/hooks/pre-commit https://example.com/x", want: Ask},
		{name: "sort -o under rule denied", allow: []string{"Bash(sort:*)"}, deny: []string{"Edit(./src/**)"}, setup: secretLayout, cmd: "sort -o src/a.go f", want: Deny},
		{name: "git -c under wildcard rule", allow: []string{"Bash(git:*)"}, cmd: "git -c alias.x='!touch pwned' x", want: Ask},
		{name: "git commit under rule", allow: []string{"Bash(git commit:*)"}, cmd: "git commit -m msg", want: Allow},
	})
}

// TestCriticalRemovals: find -delete/-exec and rsync --delete on the
// root, a top-level directory, home or a working directory are asked in
// every mode (class 6).
func TestCriticalRemovals(t *testing.T) {
	var cases []roCase
	for _, mode := range []string{"bypassPermissions", "acceptEdits"} {
		for _, c := range []roCase{
			{name: "find home delete", cmd: "find ~ -name '*.tmp' -delete", want: Ask},
			{name: "find root exec rm", cmd: "find / -exec rm -rf {} +", want: Ask},
			{name: "find cwd execdir rm", cmd: "find $CWD -execdir rm {} ';'", want: Ask},
			{name: "find default start delete", cmd: "find -delete", want: Ask},
			{name: "find dot delete", cmd: "find . -delete", want: Ask},
			{name: "find top-level exec sh", cmd: "find /usr -exec sh -c 'rm \"$1\"' _ {} ';'", want: Ask},
			{name: "find exec path rm", cmd: "find ~ -exec /bin/rm {} +", want: Ask},
			{name: "find parent of cwd", cmd: "find .. -delete", want: Ask},
			{name: "rsync delete home", cmd: "rsync -a --delete empty/ ~/", want: Ask},
			{name: "rsync delete-after cwd", cmd: "rsync -a --delete-after empty/ .", want: Ask},
			{name: "rsync del root", cmd: "rsync -r --del empty/ /", want: Ask},
			{name: "rsync delete abbreviated", cmd: "rsync -r --dele empty/ ~", want: Ask},
			{name: "sudo rm home", cmd: "sudo rm -rf ~", want: Ask},
			{name: "xargs rm", cmd: "find . -name x | xargs rm -rf", want: Ask},
		} {
			c.name = mode + " " + c.name
			c.mode = mode
			cases = append(cases, c)
		}
	}
	cases = append(cases,
		roCase{name: "bypass find subdir delete", mode: "bypassPermissions", setup: []string{"mkdir build"}, cmd: "find build -name '*.o' -delete", want: Allow},
		roCase{name: "bypass find print", mode: "bypassPermissions", cmd: "find ~ -name '*.tmp'", want: Allow},
		roCase{name: "bypass find exec grep", mode: "bypassPermissions", cmd: "find . -exec grep -l x {} +", want: Allow},
		roCase{name: "bypass rsync without delete", mode: "bypassPermissions", cmd: "rsync -a src/ ~/backup/", want: Allow},
		roCase{name: "bypass rsync delete subdir", mode: "bypassPermissions", cmd: "rsync -a --delete src/ build/", want: Allow},
	)
	runROCases(t, cases)
}
