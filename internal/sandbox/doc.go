// Package sandbox confines the commands of the Bash tool with the kernel:
// Landlock for the filesystem and TCP, and a seccomp filter for the
// sockets Landlock cannot see (UDP, raw, other families) and for terminal
// injection.
//
// # Mechanism
//
// No helper binary is involved, so a library user gets the sandbox as
// well as the CLI. [Start] runs on a goroutine of its own that locks its
// OS thread, sets no_new_privs, restricts that thread alone (Landlock
// restrict_self and a seccomp filter, neither synchronised to other
// threads) and then starts the command. Go forks from the calling thread,
// so the child inherits the thread's Landlock domain and seccomp filter.
// The goroutine ends without unlocking the thread, so the Go runtime
// destroys the thread instead of reusing it; threads the runtime creates
// while a locked thread is current come from its clean template thread.
// The rest of the process is never restricted.
//
// # What a policy enforces
//
// Reading and executing are allowed everywhere except beneath
// Policy.ReadDeny (directory listings stay allowed everywhere: Landlock
// grants listing per directory tree, and a denied directory's names are
// not its contents). Writing of every kind (create, remove, rename,
// truncate, links) is allowed only beneath the write roots (Policy.TempDir
// always, Policy.WriteAllow unless Policy.ReadOnly, and a few device files
// such as /dev/null), except beneath Policy.WriteDeny and Policy.ReadDeny.
// Landlock can only grant, so a denied path is carved out by granting its
// siblings along the way from the root: the grants are computed from the
// directory tree as it is when the command starts. Two consequences: a
// path created later inside a carved directory (not inside one of its
// granted children) gets no rights while the command runs; and a denied
// path that does not exist yet is not protected.
//
// Networking: TCP connect is allowed only to Policy.ProxyPort (with
// NetProxy), TCP bind only with AllowLocalBinding, and socket(2) is
// refused (EPERM) for every family but AF_UNIX, AF_INET and AF_INET6, and
// for AF_INET/AF_INET6 for everything but plain TCP streams, so UDP (and
// with it DNS), raw sockets, SCTP and MPTCP are blocked. io_uring is
// refused, and so are the TIOCSTI and TIOCLINUX terminal ioctls.
//
// # Limits
//
// Landlock TCP rules name a port, not an address: a sandboxed command can
// connect to any host on the proxy's port number. Pathname UNIX sockets
// stay reachable (kernels before Landlock ABI 9 cannot restrict them), so
// a daemon listening on one (such as a container engine) is reachable if
// the user may reach it. Files reachable under a second name (hard links,
// bind mounts) are judged by the name used. See docs/design.md, "Sandbox".
package sandbox
