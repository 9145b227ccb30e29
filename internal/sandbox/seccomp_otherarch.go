//go:build linux && !amd64 && !arm64

package sandbox

// nativeArch is nil where no seccomp filter has been written (and
// checked) for the architecture: the sandbox is unavailable there.
var nativeArch *seccompArch
