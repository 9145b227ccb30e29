// Package procguard starts the processes agentloop runs on the model's
// behalf (Bash commands, background shells, command hooks, stdio MCP
// servers, helpers) so that they cannot read agentloop's credentials out
// of agentloop itself.
//
// # What it defends against
//
// A Bash command or a hook planted in a cloned repository runs with the
// user's identity, often as root in containers. Scrubbing the credentials
// from its environment (internal/toolenv) is not enough: the key is still
// in agentloop's memory, and usually in the environment it was started
// with, which /proc/<pid>/environ shows to any process of the same user.
// Three measures close the routes through the kernel:
//
//  1. The agentloop process is made non-dumpable ([ProtectProcess]). The
//     kernel then answers /proc/<pid>/environ, mem, maps, fd/, ptrace,
//     process_vm_readv and pidfd_getfd of it only to a process holding
//     CAP_SYS_PTRACE, and writes no core dump.
//  2. Every process is started ([Start], [Run]) from an OS thread that has
//     dropped CAP_SYS_PTRACE and the other capabilities that read another
//     process's or the kernel's memory (CAP_SYS_ADMIN, CAP_SYS_RAWIO,
//     CAP_SYS_MODULE, CAP_BPF, CAP_PERFMON, CAP_SYS_BOOT) from its
//     effective, permitted, inheritable and bounding sets. Capabilities are
//     per thread and a child inherits those of the thread that forks it;
//     a capability absent from the bounding set is not regained by
//     executing a set-user-ID-root program, so this holds for root too.
//  3. The CLI overwrites the credentials in the environment block it was
//     started with ([HideCredentials]), after moving them into the Go
//     process's own copy, so the environment the kernel shows for its
//     process is clean even to a reader that gets past 1 and 2. (Executing
//     itself again without them would do the same at the price of a second
//     start-up, about 35 ms of CPU here.)
//
// Commands in the kernel sandbox (internal/sandbox) are held by Landlock as
// well: a sandboxed process may not trace or read the /proc entries of any
// process outside its own sandbox, whatever its capabilities.
//
// # Threads
//
// The launching threads are a small pool of OS threads (one per processor,
// 2 to 8) locked for the life of the process; they run nothing but process
// starts. The Go runtime creates new threads from its template thread
// while a locked thread is current, so the dropped capabilities never
// spread to the rest of the process. Because the launching threads live as long as the process, a
// parent-death signal (SysProcAttr.Pdeathsig) keeps its usual meaning:
// the child is signalled when agentloop exits.
//
// # Limits
//
// A process that agentloop did not start (the host's parent, a sibling
// shell of the same user) is not restricted by any of this; and a command
// running unsandboxed as root can still change the machine (write
// /proc/sys, a cron file, the agentloop binary for its next run): only the
// sandbox stops that. See docs/security.md, "Credentials".
package procguard
