// Command bench-size attributes a Go binary's size, and the pages of it
// that a run of the binary makes resident, to the packages or modules its
// bytes belong to. scripts/bench-size.sh runs it; see there.
//
//	bench-size [-by module|package] [-mods file] [-top n] size BINARY
//	bench-size [-by module|package] [-mods file] [-top n] run BINARY [ARGS...]
//
// Bytes are attributed from the executable's own tables, not estimated:
//
//   - code: the symbol table's function symbols (.text);
//   - type descriptors: the DWARF entries' runtime type addresses
//     (DW_AT_go_runtime_type), each descriptor running to the next one;
//   - the function table (.gopclntab): each function's _func record, name,
//     pc-value tables and funcdata (stack maps), found through the table's
//     header, each run of bytes belonging to the function that refers to
//     its start;
//   - other data: the symbol table's data symbols (.rodata, .noptrdata,
//     .data, .bss, .noptrbss).
//
// What no table names (merged strings, padding) is reported as such.
//
// "run" starts the binary under ptrace, stops it when its first thread
// begins to exit (PTRACE_EVENT_EXIT, the process's memory still whole) and
// reads /proc/<pid>/pagemap: every resident page of the binary's mappings
// is split among the bytes on it, so a package is charged for the pages
// its code and data share with others in proportion. Pages are resident
// because something on them was touched or because the kernel mapped them
// around a touched one (fault-around, 64 KiB): both count in the peak RSS.
//
// The module of a package comes from -mods, lines of "package module" as
// `go list -deps -f '{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}'`
// prints them; a package it does not list whose path has no dot in its
// first element is the standard library's.
package main

import (
	"bufio"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// span is a run of bytes of the image with an owner (a symbol name or a
// label) and a region (code, types, pclntab, data, ...).
type span struct {
	addr, size uint64
	name       string
	region     string
}

type image struct {
	f     *elf.File
	spans []span // sorted by addr, not overlapping
	secs  []*elf.Section
}

func main() {
	by := flag.String("by", "module", "group by module or package")
	modsFile := flag.String("mods", "", "package-to-module list (go list -deps output)")
	top := flag.Int("top", 25, "rows per table")
	flag.Parse()
	if flag.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: bench-size [flags] size|run BINARY [ARGS...]")
		os.Exit(2)
	}
	mods, err := readMods(*modsFile)
	if err != nil {
		fail(err)
	}
	img, err := load(flag.Arg(1))
	if err != nil {
		fail(err)
	}
	g := grouper{by: *by, mods: mods}
	switch flag.Arg(0) {
	case "size":
		img.report(g, nil, *top)
	case "run":
		res, status, err := residentAtExit(flag.Arg(1), flag.Args()[2:])
		if err != nil {
			fail(err)
		}
		fmt.Printf("%s\n\n", status)
		img.report(g, res, *top)
	default:
		fail(fmt.Errorf("unknown command %q", flag.Arg(0)))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench-size:", err)
	os.Exit(1)
}

func readMods(path string) (map[string]string, error) {
	m := map[string]string{}
	if path == "" {
		return m, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read modules: %w", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if p, mod, ok := strings.Cut(s.Text(), " "); ok && mod != "" {
			m[p] = mod
		}
	}
	return m, s.Err()
}

// load reads the binary's sections, symbols, type descriptors and function
// table into non-overlapping spans.
func load(path string) (*image, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open binary: %w", err)
	}
	img := &image{f: f}
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Size > 0 {
			img.secs = append(img.secs, s)
		}
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("symbols (a stripped binary has none): %w", err)
	}
	var spans []span
	var gofunc uint64
	text := f.Section(".text")
	for _, s := range syms {
		if s.Name == "go:func.*" {
			gofunc = s.Value
		}
		if s.Size == 0 || elf.ST_TYPE(s.Info) == elf.STT_SECTION {
			continue
		}
		switch {
		case s.Name == "go:func.*", s.Name == "runtime.findfunctab":
			continue // split below, or the table's own
		case text != nil && s.Value >= text.Addr && s.Value < text.Addr+text.Size:
			spans = append(spans, span{s.Value, s.Size, s.Name, "code"})
		default:
			spans = append(spans, span{s.Value, s.Size, s.Name, "data"})
		}
	}
	if ts, err := typeSpans(f); err == nil {
		spans = append(spans, ts...)
	} else {
		fmt.Fprintln(os.Stderr, "bench-size: type descriptors not attributed:", err)
	}
	if ps, err := pclnSpans(f, text, gofunc, syms); err == nil {
		spans = append(spans, ps...)
	} else {
		fmt.Fprintln(os.Stderr, "bench-size: function table not attributed:", err)
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].addr < spans[j].addr })
	// Clip overlaps (a symbol inside another keeps the later bytes).
	out := spans[:0]
	for _, s := range spans {
		if n := len(out); n > 0 {
			p := &out[n-1]
			if p.addr+p.size > s.addr {
				p.size = s.addr - p.addr
				if p.size == 0 {
					out = out[:n-1]
				}
			}
		}
		out = append(out, s)
	}
	img.spans = out
	return img, nil
}

// typeSpans maps each runtime type descriptor to its type's name through
// the DWARF attribute the Go linker writes on every type entry.
func typeSpans(f *elf.File) ([]span, error) {
	d, err := f.DWARF()
	if err != nil {
		return nil, err
	}
	// The attribute holds the descriptor's offset from runtime.types, the
	// start of the read-only data.
	const atRuntimeType = dwarf.Attr(0x2904)
	rod := f.Section(".rodata")
	if rod == nil {
		return nil, errors.New("no .rodata")
	}
	seen := map[uint64]string{}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			break
		}
		if a, ok := e.Val(atRuntimeType).(uint64); ok && a != 0 {
			if n, ok := e.Val(dwarf.AttrName).(string); ok {
				seen[rod.Addr+a] = n
			}
		}
	}
	addrs := make([]uint64, 0, len(seen))
	for a := range seen {
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
	var out []span
	for i, a := range addrs {
		end := rod.Addr + rod.Size
		if i+1 < len(addrs) {
			end = addrs[i+1]
		}
		if end-a > 1<<16 { // the last one before other data
			end = a + 1<<10
		}
		out = append(out, span{a, end - a, "type:" + seen[a], "types"})
	}
	return out, nil
}

// pclnSpans splits the function table: each function owns its _func
// record and the runs of the name, pc-value and funcdata tables that start
// where it points.
func pclnSpans(f *elf.File, text *elf.Section, gofunc uint64, syms []elf.Symbol) ([]span, error) {
	sec := f.Section(".gopclntab")
	if sec == nil || text == nil {
		return nil, errors.New("no .gopclntab")
	}
	b, err := sec.Data()
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	if len(b) < 72 || b[7] != 8 {
		return nil, errors.New("unexpected pclntab header")
	}
	nfunc := int(le.Uint64(b[8:]))
	off := func(i int) uint64 { return le.Uint64(b[24+8*i:]) }
	funcname, cu, filetab, pctab, pcln := off(1), off(2), off(3), off(4), off(5)
	_, _ = cu, filetab
	// Function names by entry, from the symbol table.
	byEntry := map[uint64]string{}
	for _, s := range syms {
		if s.Value >= text.Addr && s.Value < text.Addr+text.Size {
			byEntry[s.Value] = s.Name
		}
	}
	base := sec.Addr
	marks := map[uint64]string{} // absolute address -> function
	mark := func(a uint64, fn string) {
		if _, ok := marks[a]; !ok {
			marks[a] = fn
		}
	}
	var out []span
	for i := 0; i < nfunc; i++ {
		e := pcln + uint64(8*i)
		entry := uint64(le.Uint32(b[e:]))
		fo := pcln + uint64(le.Uint32(b[e+4:]))
		fn := byEntry[text.Addr+entry]
		if fn == "" {
			fn = "?"
		}
		if fo+44 > uint64(len(b)) {
			return nil, errors.New("function record out of range")
		}
		rec := b[fo:]
		npcdata := int(le.Uint32(rec[28:]))
		nfuncdata := int(rec[43])
		size := uint64(44 + 4*npcdata + 4*nfuncdata)
		out = append(out, span{base + fo, size, fn, "pclntab"})
		mark(base+funcname+uint64(le.Uint32(rec[4:])), fn)
		for _, o := range []uint32{le.Uint32(rec[16:]), le.Uint32(rec[20:]), le.Uint32(rec[24:])} {
			if o != 0 {
				mark(base+pctab+uint64(o), fn)
			}
		}
		for j := 0; j < npcdata; j++ {
			if o := le.Uint32(rec[44+4*j:]); o != 0 {
				mark(base+pctab+uint64(o), fn)
			}
		}
		if gofunc != 0 {
			for j := 0; j < nfuncdata; j++ {
				if o := le.Uint32(rec[44+4*npcdata+4*j:]); o != ^uint32(0) {
					mark(gofunc+uint64(o), fn)
				}
			}
		}
	}
	// The function lookup table (entry, record offset pairs) is in function
	// order: charge each pair to its function.
	for i := 0; i < nfunc; i++ {
		e := pcln + uint64(8*i)
		fn := byEntry[text.Addr+uint64(le.Uint32(b[e:]))]
		out = append(out, span{base + e, 8, fn, "pclntab"})
	}
	// Runs of the name, pc-value and funcdata tables: from each mark to
	// the next mark, within the table it is in.
	bounds := []uint64{base + funcname, base + cu, base + filetab, base + pctab, base + pcln}
	if gofunc != 0 {
		bounds = append(bounds, gofunc)
	}
	bounds = append(bounds, sec.Addr+sec.Size)
	sort.Slice(bounds, func(i, j int) bool { return bounds[i] < bounds[j] })
	addrs := make([]uint64, 0, len(marks))
	for a := range marks {
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
	for i, a := range addrs {
		end := sec.Addr + sec.Size
		if i+1 < len(addrs) {
			end = addrs[i+1]
		}
		for _, bd := range bounds {
			if bd > a && bd < end {
				end = bd
				break
			}
		}
		out = append(out, span{a, end - a, marks[a], "pclntab"})
	}
	return out, nil
}

// grouper names the package or module a symbol belongs to.
type grouper struct {
	by   string
	mods map[string]string
}

// pkgOf returns the import path of the package a symbol or type name
// belongs to.
func pkgOf(name string) string {
	for _, p := range []string{"type:", ".eq.", ".hash.", "go:itab.", "go:"} {
		name = strings.TrimPrefix(name, p)
	}
	// A composite type ("map[string]*example.com/p.T", "func(*p.T)")
	// belongs to its first named element.
	if d := strings.Index(name, "."); d >= 0 {
		if i := strings.LastIndexAny(name[:d], "]*( "); i >= 0 {
			name = name[i+1:]
		}
	} else if strings.ContainsAny(name, "[]*( ") {
		return "(built-in types)"
	}
	if i := strings.IndexAny(name, "[(,"); i >= 0 {
		name = name[:i]
	}
	s := strings.LastIndex(name, "/")
	if j := strings.Index(name[s+1:], "."); j >= 0 {
		name = name[:s+1+j]
	}
	if name == "" {
		return "?"
	}
	return name
}

func (g grouper) group(name string) string {
	p := pkgOf(name)
	if strings.HasPrefix(p, "vendor/") {
		p = "std (vendored x/)"
	}
	if g.by == "package" {
		return p
	}
	if m, ok := g.mods[p]; ok {
		return m
	}
	if p == "?" || p == "(built-in types)" {
		return p
	}
	first, _, _ := strings.Cut(p, "/")
	if !strings.Contains(first, ".") {
		return "std"
	}
	// A package the list does not name: the longest listed module prefix.
	best := ""
	for _, m := range g.mods {
		if strings.HasPrefix(p, m+"/") && len(m) > len(best) {
			best = m
		}
	}
	if best != "" {
		return best
	}
	return p
}

type row struct {
	name                    string
	code, types, pcln, data float64
	total                   float64
}

// report prints the bytes (res == nil) or the resident bytes of each
// group, by region.
func (img *image) report(g grouper, res map[uint64]bool, top int) {
	const page = 4096
	rows := map[string]*row{}
	add := func(name, region string, n float64) {
		r := rows[name]
		if r == nil {
			r = &row{name: name}
			rows[name] = r
		}
		switch region {
		case "code":
			r.code += n
		case "types":
			r.types += n
		case "pclntab":
			r.pcln += n
		default:
			r.data += n
		}
		r.total += n
	}
	// Per section: total, resident, and the bytes no span covers.
	fmt.Println("| section | bytes | resident KiB |")
	fmt.Println("|---|---|---|")
	var totalRes uint64
	for _, s := range img.secs {
		var resident uint64
		if res != nil {
			for p := s.Addr &^ (page - 1); p < s.Addr+s.Size; p += page {
				if res[p] {
					lo, hi := max(p, s.Addr), min(p+page, s.Addr+s.Size)
					resident += hi - lo
				}
			}
		}
		totalRes += resident
		fmt.Printf("| %s | %d | %s |\n", s.Name, s.Size, kib(float64(resident), res != nil))
	}
	if res != nil {
		fmt.Printf("| **all** | | **%.0f** |\n", float64(totalRes)/1024)
	}
	fmt.Println()
	regionOf := func(a uint64) string {
		for _, s := range img.secs {
			if a >= s.Addr && a < s.Addr+s.Size {
				switch s.Name {
				case ".text":
					return "code"
				case ".gopclntab":
					return "pclntab"
				case ".rodata":
					return "types"
				}
				return "data"
			}
		}
		return "data"
	}
	charge := func(lo, hi uint64, name, region string) {
		if res == nil {
			add(name, region, float64(hi-lo))
			return
		}
		for p := lo &^ (page - 1); p < hi; p += page {
			if res[p] {
				a, b := max(p, lo), min(p+page, hi)
				add(name, region, float64(b-a))
			}
		}
	}
	// Walk each section: spans charge their group, gaps "(unnamed)".
	for _, s := range img.secs {
		if s.Type == elf.SHT_NOBITS && res == nil {
			continue
		}
		a, end := s.Addr, s.Addr+s.Size
		i := sort.Search(len(img.spans), func(i int) bool { return img.spans[i].addr+img.spans[i].size > a })
		for a < end {
			if i < len(img.spans) && img.spans[i].addr < end {
				sp := img.spans[i]
				if sp.addr > a {
					charge(a, sp.addr, "(unnamed: strings, padding)", regionOf(a))
					a = sp.addr
				}
				hi := min(sp.addr+sp.size, end)
				if hi > a {
					charge(a, hi, g.group(sp.name), sp.region)
					a = hi
				}
				i++
				continue
			}
			charge(a, end, "(unnamed: strings, padding)", regionOf(a))
			break
		}
	}
	var list []*row
	var sum row
	for _, r := range rows {
		list = append(list, r)
		sum.code += r.code
		sum.types += r.types
		sum.pcln += r.pcln
		sum.data += r.data
		sum.total += r.total
	}
	sort.Slice(list, func(i, j int) bool { return list[i].total > list[j].total })
	unit, div := "KB", 1000.0
	if res != nil {
		unit, div = "KiB resident", 1024.0
	}
	fmt.Printf("| %s | total %s | code | types | pclntab | other data |\n", g.by, unit)
	fmt.Println("|---|---|---|---|---|---|")
	var rest row
	for i, r := range list {
		if i >= top {
			rest.code += r.code
			rest.types += r.types
			rest.pcln += r.pcln
			rest.data += r.data
			rest.total += r.total
			continue
		}
		fmt.Printf("| %s | %.0f | %.0f | %.0f | %.0f | %.0f |\n", r.name, r.total/div, r.code/div, r.types/div, r.pcln/div, r.data/div)
	}
	if len(list) > top {
		fmt.Printf("| %d others | %.0f | %.0f | %.0f | %.0f | %.0f |\n", len(list)-top, rest.total/div, rest.code/div, rest.types/div, rest.pcln/div, rest.data/div)
	}
	fmt.Printf("| **total** | **%.0f** | %.0f | %.0f | %.0f | %.0f |\n", sum.total/div, sum.code/div, sum.types/div, sum.pcln/div, sum.data/div)
}

func kib(n float64, ok bool) string {
	if !ok {
		return ""
	}
	return strconv.FormatFloat(n/1024, 'f', 0, 64)
}

// residentAtExit runs the binary under ptrace until one of its threads
// starts to exit and returns the page addresses of its image that are
// resident then, with a line of its memory counters.
func residentAtExit(bin string, args []string) (map[uint64]bool, string, error) {
	runtime.LockOSThread() // ptrace requests must come from the tracing thread
	defer runtime.UnlockOSThread()
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, io.Discard, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start: %w", err)
	}
	pid := cmd.Process.Pid
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		return nil, "", fmt.Errorf("wait for exec: %w", err)
	}
	const optExit = 0x40 // PTRACE_O_TRACEEXIT
	const eventExit = 6  // PTRACE_EVENT_EXIT
	opts := syscall.PTRACE_O_TRACECLONE | optExit
	if err := syscall.PtraceSetOptions(pid, opts); err != nil {
		return nil, "", fmt.Errorf("ptrace options: %w", err)
	}
	if err := syscall.PtraceCont(pid, 0); err != nil {
		return nil, "", fmt.Errorf("ptrace cont: %w", err)
	}
	var res map[uint64]bool
	var status string
	for {
		tid, err := syscall.Wait4(-1, &ws, syscall.WALL, nil)
		if err != nil {
			if errors.Is(err, syscall.ECHILD) {
				break
			}
			return nil, "", fmt.Errorf("wait: %w", err)
		}
		if ws.Exited() || ws.Signaled() {
			if tid == pid {
				break
			}
			continue
		}
		if !ws.Stopped() {
			continue
		}
		sig := ws.StopSignal()
		switch {
		case sig == syscall.SIGTRAP && ws.TrapCause() == eventExit:
			if res == nil {
				res, status, err = readResident(pid, bin)
				if err != nil {
					return nil, "", err
				}
			}
			sig = 0
		case sig == syscall.SIGTRAP && ws.TrapCause() > 0, sig == syscall.SIGSTOP:
			sig = 0 // clone events and new threads' first stop
		}
		_ = syscall.PtraceCont(tid, int(sig))
	}
	if res == nil {
		return nil, "", errors.New("the process ended without an exit stop")
	}
	return res, status, nil
}

// readResident reads which pages of the mappings of bin (and the
// anonymous mappings right after them: the binary's bss) are present.
func readResident(pid int, bin string) (map[uint64]bool, string, error) {
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, "", err
	}
	pm, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return nil, "", err
	}
	defer pm.Close()
	res := map[uint64]bool{}
	inImage := false
	for _, line := range strings.Split(strings.TrimSpace(string(maps)), "\n") {
		fields := strings.Fields(line)
		path := ""
		if len(fields) >= 6 {
			path = fields[5]
		}
		switch {
		case path != "" && strings.HasSuffix(path, "/"+lastElem(bin)):
			inImage = true
		case path == "" && inImage:
		default:
			inImage = false
		}
		if !inImage {
			continue
		}
		lo, hi, _ := strings.Cut(fields[0], "-")
		a, _ := strconv.ParseUint(lo, 16, 64)
		z, _ := strconv.ParseUint(hi, 16, 64)
		n := (z - a) / 4096
		buf := make([]byte, 8*n)
		if _, err := pm.ReadAt(buf, int64(a/4096*8)); err != nil {
			return nil, "", fmt.Errorf("pagemap: %w", err)
		}
		for i := uint64(0); i < n; i++ {
			if binary.LittleEndian.Uint64(buf[8*i:])&(1<<63) != 0 {
				res[a+i*4096] = true
			}
		}
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, "", err
	}
	var parts []string
	for _, l := range strings.Split(string(st), "\n") {
		for _, k := range []string{"VmHWM", "RssAnon", "RssFile"} {
			if strings.HasPrefix(l, k+":") {
				parts = append(parts, strings.Join(strings.Fields(l), " "))
			}
		}
	}
	return res, "at exit: " + strings.Join(parts, ", "), nil
}

func lastElem(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}
