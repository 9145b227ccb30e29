//go:build linux && !amd64 && !arm64

package tools

// sysFstatat is the number of the fstatat system call that fills a
// syscall.Stat_t, or -1 where there is none to use: on these
// architectures the kernel's struct stat and syscall.Stat_t may differ, so
// entries are stat'ed by path.
const sysFstatat = -1
