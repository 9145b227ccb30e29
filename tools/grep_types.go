package tools

import (
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/agentloop/agentloop/internal/lazy"
)

var grepTypesOnce lazy.Value[map[string][]string] // the value of grepTypes, built at its first use

// grepTypes maps the file type names Grep's type parameter accepts (the
// common ones of ripgrep's --type) to the file name globs they select.
// It is built when first needed, not at start-up by every process.
func grepTypes() map[string][]string { return grepTypesOnce.Get(newGrepTypes) }

func newGrepTypes() map[string][]string {
	types := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(`
asm: *.asm *.s *.S
awk: *.awk
bazel: *.bzl *.bazel BUILD WORKSPACE *.BUILD
c: *.c *.h *.H *.cats
clojure: *.clj *.cljc *.cljs *.cljx *.edn
cmake: *.cmake CMakeLists.txt
coffeescript: *.coffee
cpp: *.C *.cc *.cpp *.cxx *.c++ *.h *.H *.hh *.hpp *.hxx *.h++ *.inl *.ipp *.tpp
cs: *.cs
csharp: *.cs
css: *.css *.scss *.sass *.less
csv: *.csv
cuda: *.cu *.cuh
d: *.d
dart: *.dart
docker: Dockerfile *.Dockerfile *.dockerfile Dockerfile.* dockerfile
elixir: *.ex *.exs *.eex *.heex *.leex
elm: *.elm
erlang: *.erl *.hrl
fish: *.fish
fsharp: *.fs *.fsi *.fsx
go: *.go
gomod: go.mod go.sum go.work
gradle: *.gradle *.gradle.kts
graphql: *.graphql *.graphqls *.gql
groovy: *.groovy *.gradle
h: *.h *.hh *.hpp *.hxx
haskell: *.hs *.lhs *.cabal
hcl: *.hcl *.tf *.tfvars
html: *.htm *.html *.ejs *.xhtml
ini: *.ini *.cfg *.conf
java: *.java *.jsp *.jspx *.properties
js: *.js *.jsx *.mjs *.cjs *.vue
json: *.json *.jsonc *.jsonl *.json5 *.geojson *.webmanifest
jsonl: *.jsonl
julia: *.jl
jupyter: *.ipynb
kotlin: *.kt *.kts
less: *.less
lisp: *.lisp *.lsp *.el *.cl
lua: *.lua
make: Makefile makefile GNUmakefile *.mk *.mak
markdown: *.md *.markdown *.mdown *.mdwn *.mkd *.mkdn *.mdx
md: *.md *.markdown *.mdown *.mdwn *.mkd *.mkdn *.mdx
nim: *.nim *.nimble
nix: *.nix
objc: *.h *.m
objcpp: *.h *.mm
ocaml: *.ml *.mli *.mll *.mly
perl: *.pl *.pm *.pod *.t *.psgi
php: *.php *.php3 *.php4 *.php5 *.phtml
powershell: *.ps1 *.psm1 *.psd1
proto: *.proto
protobuf: *.proto
ps: *.cdxml *.ps1 *.ps1xml *.psd1 *.psm1
py: *.py *.pyi *.pyw
python: *.py *.pyi *.pyw
r: *.R *.r *.Rmd *.Rnw
rst: *.rst
ruby: *.rb *.rake *.gemspec Gemfile Rakefile *.erb
rust: *.rs
sass: *.sass *.scss
scala: *.scala *.sbt *.sc
sh: *.sh *.bash *.zsh *.ksh *.csh .bashrc .bash_profile .bash_login .profile .zshrc .zprofile .kshrc
sql: *.sql *.psql
svelte: *.svelte
svg: *.svg
swift: *.swift
tex: *.tex *.ltx *.cls *.sty *.bib
tf: *.tf *.tfvars *.tf.json
toml: *.toml Cargo.lock
ts: *.ts *.tsx *.cts *.mts
tsx: *.tsx
txt: *.txt
typescript: *.ts *.tsx *.cts *.mts
vue: *.vue
xml: *.xml *.xsd *.xsl *.xslt *.dtd *.rng *.sch *.plist *.xaml *.csproj *.svg
yaml: *.yaml *.yml
zig: *.zig
zsh: *.zsh .zshrc .zprofile .zshenv .zlogin .zlogout
`), "\n") {
		name, globs, _ := strings.Cut(line, ":")
		types[name] = strings.Fields(globs)
	}
	return types
}

// grepTypeNames lists the known type names, sorted.
func grepTypeNames() []string {
	names := make([]string, 0, len(grepTypes()))
	for n := range grepTypes() {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// nameGlob is a glob matched against a file name, compiled so that the
// common shapes ("*.go", "Makefile") need no glob matching.
type nameGlob struct {
	kind uint8  // nameExact, nameSuffix or nameGlobbed (nameNone: no glob)
	s    string // the name, the suffix after "*", or the pattern
}

const (
	nameNone = iota
	nameExact
	nameSuffix
	nameGlobbed
)

func newNameGlob(pattern string) nameGlob {
	const special = `*?[]{}\`
	switch {
	case !strings.ContainsAny(pattern, special):
		return nameGlob{nameExact, pattern}
	case pattern[0] == '*' && !strings.ContainsAny(pattern[1:], special):
		return nameGlob{nameSuffix, pattern[1:]}
	}
	return nameGlob{nameGlobbed, pattern}
}

func (g nameGlob) match(name string) bool {
	switch g.kind {
	case nameExact:
		return name == g.s
	case nameSuffix:
		return strings.HasSuffix(name, g.s)
	}
	ok, _ := doublestar.Match(g.s, name)
	return ok
}
