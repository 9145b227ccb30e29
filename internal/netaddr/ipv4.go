package netaddr

import (
	"errors"
	"net/netip"
	"strings"
)

var errIPv4 = errors.New("not a valid IPv4 address")

// endsInNumber reports whether a host name's last label is a number, the
// WHATWG URL test for "this host must be an IPv4 address". s has no
// trailing dot.
func endsInNumber(s string) bool {
	last := s[strings.LastIndexByte(s, '.')+1:]
	if last == "" {
		return false
	}
	if allDigits(last) {
		return true
	}
	_, ok := ipv4Number(last)
	return ok
}

// parseIPv4 reads the numeric host forms that inet_aton and the WHATWG URL
// parser accept: one to four dot-separated parts, each decimal, octal
// (leading 0) or hex (0x), the last part filling the remaining bytes, so
// that 2130706433, 0x7f.1, 0177.0.0.1 and 127.1 all mean 127.0.0.1.
func parseIPv4(s string) (netip.Addr, error) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, errIPv4
	}
	var nums [4]uint64
	for i, p := range parts {
		n, ok := ipv4Number(p)
		if !ok {
			return netip.Addr{}, errIPv4
		}
		nums[i] = n
	}
	last := len(parts) - 1
	var v uint64
	for i := range last {
		if nums[i] > 255 {
			return netip.Addr{}, errIPv4
		}
		v = v<<8 | nums[i]
	}
	rest := uint(8 * (4 - last)) // bits the last part fills
	if nums[last] >= 1<<rest {
		return netip.Addr{}, errIPv4
	}
	v = v<<rest | nums[last]
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), nil
}

// ipv4Number parses one part of a numeric host. Values above 2^32 are
// reported as 2^32 so that the caller's range checks fail without overflow.
func ipv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, p = 16, p[2:]
	case len(p) >= 2 && p[0] == '0':
		base, p = 8, p[1:]
	}
	var n uint64
	for i := 0; i < len(p); i++ {
		d, ok := digit(p[i])
		if !ok || d >= base {
			return 0, false
		}
		n = n*base + d
		if n > 1<<32 {
			n = 1 << 32
		}
	}
	return n, true
}

func digit(c byte) (uint64, bool) {
	switch {
	case '0' <= c && c <= '9':
		return uint64(c - '0'), true
	case 'a' <= c && c <= 'f':
		return uint64(c-'a') + 10, true
	case 'A' <= c && c <= 'F':
		return uint64(c-'A') + 10, true
	}
	return 0, false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
