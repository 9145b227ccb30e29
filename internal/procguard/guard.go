package procguard

import (
	"os/exec"
	"sync/atomic"
)

// disabled turns every measure off; see SetDisabledForTest.
var disabled atomic.Bool

// SetDisabledForTest turns the measures of this package off (true) or on
// again, so that a test can show that its attack succeeds without them.
// Only tests call it.
func SetDisabledForTest(off bool) { disabled.Store(off) }

// Start starts cmd as exec.Cmd.Start does, from a launching thread
// without the capabilities that read other processes' memory, after
// making this process non-dumpable (see the package doc).
func Start(cmd *exec.Cmd) error {
	return Run(cmd.Start)
}

// Run calls fn on a launching thread and returns its error; any process
// fn starts inherits that thread's reduced capabilities. fn must only
// start processes and return: it holds the thread while it runs. Run is
// safe for concurrent use.
func Run(fn func() error) error {
	if disabled.Load() {
		return fn()
	}
	ProtectProcess()
	return run(fn)
}
