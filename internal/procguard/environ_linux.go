//go:build linux

package procguard

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// scrubEnvironBlock overwrites with NULs the values of the variables
// names in the environment block the kernel shows in /proc/self/environ,
// found from the addresses /proc/self/stat gives (fields 50 and 51), and
// writes them through /proc/self/mem.
func scrubEnvironBlock(names []string) error {
	start, end, err := environBounds()
	if err != nil {
		return err
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("procguard: opening /proc/self/mem: %w", err)
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, int64(start)); err != nil {
		return fmt.Errorf("procguard: reading the environment block: %w", err)
	}
	for off := 0; off < len(block); {
		n := bytes.IndexByte(block[off:], 0)
		if n < 0 {
			n = len(block) - off
		}
		entry := block[off : off+n]
		if name, _, ok := bytes.Cut(entry, []byte("=")); ok && contains(names, string(name)) {
			valueAt := off + len(name) + 1
			zeros := make([]byte, n-len(name)-1)
			if _, err := mem.WriteAt(zeros, int64(start)+int64(valueAt)); err != nil {
				return fmt.Errorf("procguard: overwriting %s in the environment block: %w", name, err)
			}
		}
		off += n + 1
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// environBounds returns env_start and env_end from /proc/self/stat.
func environBounds() (start, end uint64, err error) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("procguard: %w", err)
	}
	// The command name (field 2) may hold spaces and parentheses; the
	// fields after the last ')' start at field 3.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, errors.New("procguard: /proc/self/stat has no command name")
	}
	fields := strings.Fields(string(stat[i+1:]))
	const envStart, envEnd = 50 - 3, 51 - 3
	if len(fields) <= envEnd {
		return 0, 0, fmt.Errorf("procguard: /proc/self/stat has %d fields, not the environment's bounds", len(fields)+2)
	}
	start, err1 := strconv.ParseUint(fields[envStart], 10, 64)
	end, err2 := strconv.ParseUint(fields[envEnd], 10, 64)
	if err1 != nil || err2 != nil || end < start || end-start > 1<<30 {
		return 0, 0, fmt.Errorf("procguard: environment bounds %q-%q in /proc/self/stat", fields[envStart], fields[envEnd])
	}
	return start, end, nil
}
