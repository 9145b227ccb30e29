package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCarve: denied paths are left out by granting their siblings along
// the way down from the root, and nothing else changes.
func TestCarve(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/b/c", "a/b/d", "a/e", "f"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a/b/file", "g"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	rel := func(gs []grant) []string {
		var out []string
		for _, g := range gs {
			p := strings.TrimPrefix(g.path, root)
			if g.dir {
				p += "/"
			}
			out = append(out, p)
		}
		return out
	}
	tests := []struct {
		name  string
		holes []string
		want  []string
	}{
		{"no holes", nil, []string{"/"}},
		{"hole elsewhere", []string{"/../elsewhere"}, []string{"/"}},
		{"deep hole", []string{"/a/b/c"}, []string{"/a/b/d/", "/a/b/file", "/a/e/", "/f/", "/g"}},
		{"file hole", []string{"/a/b/file"}, []string{"/a/b/c/", "/a/b/d/", "/a/e/", "/f/", "/g"}},
		{"two holes", []string{"/a/b", "/f"}, []string{"/a/e/", "/g"}},
		{"root is a hole", []string{""}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var holes []string
			for _, h := range tt.holes {
				holes = append(holes, filepath.Clean(root+h))
			}
			var got []grant
			if err := carve(root, true, holes, readDir, &got, 1); err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if len(want) == 1 && want[0] == "/" {
				want = []string{"/"} // root itself, as a directory
			}
			if diff := cmp.Diff(want, rel(got)); diff != "" {
				t.Errorf("grants (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCarveLimit: a carve that needs too many rules fails instead of
// slowing every command down.
func TestCarveLimit(t *testing.T) {
	root := t.TempDir()
	for i := range maxGrants + 1 {
		if err := os.WriteFile(filepath.Join(root, "f"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+filepath.Base(t.Name())+itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "deny"), 0o755); err != nil {
		t.Fatal(err)
	}
	var got []grant
	if err := carve(root, true, []string{filepath.Join(root, "deny")}, readDir, &got, 1); err == nil {
		t.Errorf("carve over %d entries succeeded with %d grants", maxGrants+1, len(got))
	}
}

func itoa(i int) string {
	s := ""
	for {
		s = string(rune('0'+i%10)) + s
		if i /= 10; i == 0 {
			return s
		}
	}
}

// TestRights: each ABI handles what it knows, and device ioctls are never
// granted.
func TestRights(t *testing.T) {
	for abi := 1; abi <= 8; abi++ {
		r := rightsFor(abi)
		if r.read|r.write|r.device|r.handled != r.handled {
			t.Errorf("ABI %d grants rights it does not handle", abi)
		}
		if r.write&accessIoctlDev != 0 || r.device&accessIoctlDev != 0 {
			t.Errorf("ABI %d grants device ioctls", abi)
		}
		if (r.handled&accessRefer != 0) != (abi >= 2) || (r.handled&accessTruncate != 0) != (abi >= 3) {
			t.Errorf("ABI %d: handled %#x", abi, r.handled)
		}
	}
}

// TestEnv: the proxy variables point at the proxy and nothing bypasses it.
func TestEnv(t *testing.T) {
	p := &Policy{Network: NetProxy, ProxyPort: 4321, TempDir: "/tmp/s"}
	want := []string{"TMPDIR=/tmp/s",
		"HTTP_PROXY=http://127.0.0.1:4321", "HTTPS_PROXY=http://127.0.0.1:4321",
		"http_proxy=http://127.0.0.1:4321", "https_proxy=http://127.0.0.1:4321",
		"ALL_PROXY=http://127.0.0.1:4321", "all_proxy=http://127.0.0.1:4321",
		"NO_PROXY=", "no_proxy="}
	if diff := cmp.Diff(want, p.Env()); diff != "" {
		t.Errorf("Env (-want +got):\n%s", diff)
	}
	if env := (&Policy{}).Env(); len(env) != 0 {
		t.Errorf("empty policy sets %q", env)
	}
}

// TestCarveCreate: a directory carved because holes lie inside it may
// have new entries made in it, but only when no such hole is a
// directory (a create right on an ancestor reaches inside a directory
// hole), and never the rights to remove, rename away or refer.
func TestCarveCreate(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/dir", "b"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a/file", "c"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := rightsFor(7).write
	type rule struct {
		Path   string
		Access uint64
	}
	tests := []struct {
		name  string
		holes []string
		want  []rule
	}{
		{"file hole", []string{"a/file"}, []rule{
			{"", createRights}, {"/a", createRights}, {"/a/dir", w}, {"/b", w}, {"/c", w}}},
		{"directory hole", []string{"a/dir"}, []rule{
			{"/a/file", w}, {"/b", w}, {"/c", w}}},
		{"file and directory holes", []string{"c", "a/dir"}, []rule{
			{"/a/file", w}, {"/b", w}}},
		{"top-level file hole", []string{"c"}, []rule{
			{"", createRights}, {"/a", w}, {"/b", w}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var holes []string
			for _, h := range tt.holes {
				holes = append(holes, filepath.Join(root, h))
			}
			var out []grant
			if err := carve(root, true, holes, readDir, &out, w); err != nil {
				t.Fatal(err)
			}
			var got []rule
			for _, g := range out {
				got = append(got, rule{strings.TrimPrefix(g.path, root), g.access})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("grants (-want +got):\n%s", diff)
			}
			for _, g := range out {
				if g.access == createRights&w && g.access&(accessRemoveDir|accessRemoveFile|accessRefer) != 0 {
					t.Errorf("%s: a carved directory may remove or refer", g.path)
				}
			}
		})
	}
}

// TestWriteRootInsideReadAllow: a write root inside a tree read back in
// (ReadAllow) inside a denied one (ReadDeny) is writable, as a server's
// session directory inside its tenant's root inside the denied root of
// all tenants; a WriteDeny tree around it still wins, and a sibling of
// the tree read back in stays unreadable.
func TestWriteRootInsideReadAllow(t *testing.T) {
	x, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/w", "b"} {
		if err := os.MkdirAll(filepath.Join(x, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a, w, b := filepath.Join(x, "a"), filepath.Join(x, "a", "w"), filepath.Join(x, "b")
	rights := fsRights{read: 1, write: 2}
	writes := func(p *Policy) []string {
		r := p.resolved()
		gs, err := r.grants(rights, readDir, append(append([]string{}, r.WriteDeny...), r.ReadDeny...))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, g := range gs {
			if g.access&rights.write != 0 {
				out = append(out, g.path)
			}
			if g.access&rights.read != 0 && within(g.path, b) {
				t.Errorf("%s is readable", g.path)
			}
		}
		return out
	}
	if got := writes(&Policy{ReadDeny: []string{x}, ReadAllow: []string{a}, WriteAllow: []string{w}}); !cmp.Equal(got, []string{w}) {
		t.Errorf("write grants %v, want %s", got, w)
	}
	if got := writes(&Policy{ReadDeny: []string{x}, WriteAllow: []string{w}}); len(got) != 0 {
		t.Errorf("without ReadAllow: write grants %v, want none", got)
	}
	if got := writes(&Policy{ReadDeny: []string{x}, ReadAllow: []string{a}, WriteDeny: []string{a}, WriteAllow: []string{w}}); len(got) != 0 {
		t.Errorf("with WriteDeny around it: write grants %v, want none", got)
	}
}
