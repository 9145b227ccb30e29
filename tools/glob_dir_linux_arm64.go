package tools

import "syscall"

// sysFstatat is the number of the fstatat system call that fills a
// syscall.Stat_t, or -1 where there is none to use.
const sysFstatat = syscall.SYS_FSTATAT
