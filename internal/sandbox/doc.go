// Package sandbox confines the commands of the Bash tool with the kernel:
// Landlock for the filesystem and TCP, a seccomp filter for the sockets
// Landlock cannot see (UDP, raw, other families) and for terminal
// injection, and, where the process may, read-only mounts in a mount
// namespace of the command's own for the metadata Landlock cannot see
// (modes, owners, times, extended attributes).
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
// Before Landlock, the same thread moves to a mount namespace of its own
// (unshare(CLONE_NEWNS), which affects that thread alone), so that
// metadata, which Landlock does not cover, is confined too: the
// namespace's mounts are made private (nothing propagates back), each
// writable root is cloned with its submounts (open_tree), every mount is
// made read-only (mount_setattr, recursively from /), the clones are
// attached back on their roots, and the denied paths inside the roots
// (Policy.WriteDeny and Policy.ReadDeny, at most 64, and every
// Policy.Protect path) are bound on themselves read-only. A read-only
// mount inside a root stays read-only. The thread then enters its working
// directory again by name (the old one is covered). The command inherits
// the namespace; the process keeps it open until the command has exited,
// so that its teardown happens in the background. This takes
// CAP_SYS_ADMIN: [MetadataProtected] reports, once, whether this process
// can, and why not. Without it commands are still confined by Landlock
// and seccomp, only not their metadata changes. With it, the Landlock
// rules grant the writable roots whole around the paths the mounts keep
// read-only, so that new entries can be made next to them; the denied
// paths beyond the 64 are carved out of the rules instead (see below).
//
// # Protected paths
//
// Policy.Protect names paths that must stay unwritable whether or not
// they exist, such as the configuration a later, unsandboxed program
// loads from the working directory (.claude/settings.json, .mcp.json):
// the command may not write, create, remove, rename, link over or into
// or out of, or change the metadata of them or anything beneath them.
// With the mount step, an existing protected path is bound read-only on
// itself (a mount point can be neither removed nor renamed, nor linked
// across), and a missing one is held by a placeholder: an empty directory
// made, before the command starts, at the path's first missing component
// (a directory even for a file name such as .mcp.json: nothing can be
// created in it once bound read-only, and git does not track an empty
// directory), then bound read-only. The directories between the writable
// root and a protected path are bound on themselves writable, so that the
// command cannot rename the parent away and make a new one (moving files
// across them becomes a copy). A protected path reached through a
// symbolic link inside a writable root is refused: Start fails, since the
// command could replace the link. Protect paths are never dropped by the
// 64 limit.
//
// A placeholder is removed again (rmdir, only while it is still the empty
// directory the sandbox made) once no process is left that could see its
// mount: removing a mount point from another namespace detaches the mount
// there, which would let a survivor create the file. When a command
// exits, the process looks through /proc for tasks in its namespace, and
// for tasks in other namespaces (a copy made with unshare, say) with a
// mount on the placeholder; while any remain, it looks again later, less
// and less often (every 2 s at most). Commands started at the same time
// share a placeholder, which goes after the last of them. Placeholders
// still held when this process exits stay behind, empty.
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
// Where [MetadataProtected], changing a file's metadata (mode, owner,
// times, extended attributes, inode flags: chmod, chown, touch,
// setxattr, chattr) is confined the same way: allowed beneath the write
// roots but not beneath their denied paths, refused (EROFS) everywhere
// else, device files included (writing to /dev/null works, chmod of it
// does not). Landlock has no right for metadata, so this is the read-only
// mounts' doing, and the seccomp filter refuses the system calls that
// could undo them (mount, umount2, pivot_root, open_tree, move_mount,
// fsopen, fsconfig, fsmount, fspick, mount_setattr, open_tree_attr,
// setns).
//
// Landlock can only grant, so a denied path the mounts do not keep is
// carved out by granting its siblings along the way from the root: the
// grants are computed from the directory tree as it is when the command
// starts. A directory carved that way may have new entries made in it
// (files, directories, links, FIFOs, sockets) unless one of the holes in
// it is a directory (Landlock grants a directory's rights to everything
// beneath it, holes included), but never entries removed, renamed away or
// linked across, and the new entries get no write right. Two
// consequences: a path created later inside a carved directory (not
// inside one of its granted children) cannot be written while the
// command runs; and a denied path that does not exist yet is not
// protected. Without the mount step, Policy.Protect paths are carved the
// same way (with the symbolic links met on the way to them, which
// cannot be replaced then), so only the ones that exist are enforced:
// [ProtectsMissingPaths] says which, for the caller to report.
//
// Networking: TCP connect is allowed only to Policy.ProxyPort (with
// NetProxy), TCP bind only with AllowLocalBinding, and socket(2) is
// refused (EPERM) for every family but AF_UNIX, AF_INET and AF_INET6, and
// for AF_INET/AF_INET6 for everything but plain TCP streams, so UDP (and
// with it DNS), raw sockets, SCTP and MPTCP are blocked. With NetAll the
// network is not restricted at all: the Landlock ruleset handles no
// network right and the seccomp filter allows every socket. Whatever the
// mode, io_uring is refused, and so are the TIOCSTI and TIOCLINUX
// terminal ioctls and the mount system calls listed above.
//
// # Limits
//
// Landlock TCP rules name a port, not an address: a sandboxed command can
// connect to any host on the proxy's port number. Pathname UNIX sockets
// stay reachable (kernels before Landlock ABI 9 cannot restrict them), so
// a daemon listening on one (such as a container engine) is reachable if
// the user may reach it. Files reachable under a second name (hard links,
// bind mounts) are judged by the name used; that holds for metadata too:
// a hard link inside a root to a file outside lets the command change
// the file's metadata. The read-only mounts do not cover the command's
// inherited file descriptors (opened by the parent, on its mounts): with
// a file outside as its standard input or output, a command could fchmod
// it. The mount step's denied paths are the ones that exist when the
// command starts, as for Landlock, and only the first 64 (in sorted
// order) get read-only metadata; Protect paths are all kept, existing or
// not. A mount made on the host while a command runs is not seen by the
// command. A placeholder is an empty directory the user sees while a
// command (or what it left running) lives, and a program expecting a
// file there finds a directory. See docs/design.md, "Sandbox".
package sandbox
