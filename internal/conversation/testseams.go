package conversation

import "time"

// Test seams: switches for the tests of this module (the package is
// internal, so nothing outside the module can reach them). Each returns
// a function that restores what it changed; none may be used by tests
// that run in parallel with others of their package.

// SetForceAllowForTest makes every tool call of every session in this
// process authorised (see testForceAllow) until restore is called. Tests
// that use it must not run in parallel with other tests of the package.
func SetForceAllowForTest(b bool) (restore func()) {
	old := testForceAllow.Swap(b)
	return func() { testForceAllow.Store(old) }
}

// SetSandboxDisabledForTest turns the Bash sandbox off (b true) for every
// session in this process until restore is called.
func SetSandboxDisabledForTest(b bool) (restore func()) {
	old := testDisableSandbox.Swap(b)
	return func() { testDisableSandbox.Store(old) }
}

// SetConfigProtectDisabledForTest stops sandboxed commands' protection of
// configuration files (b true) until restore is called, for mutation
// checks.
func SetConfigProtectDisabledForTest(b bool) (restore func()) {
	old := testNoConfigProtect.Swap(b)
	return func() { testNoConfigProtect.Store(old) }
}

// SetCloseTimeout shortens how long Client.Close waits, for a test; it
// returns a function that restores the bound.
func SetCloseTimeout(d time.Duration) (restore func()) {
	old := closeTimeout
	closeTimeout = d
	return func() { closeTimeout = old }
}

// SetManagedSettingsPathForTest makes every session of this process read
// its managed policy from path instead of the platform's managed-settings
// file, until restore is called. Tests that use it must not run in
// parallel with other tests of the package.
func SetManagedSettingsPathForTest(path string) (restore func()) {
	old := testManagedPath.Swap(&path)
	return func() { testManagedPath.Store(old) }
}

// SetMirrorCloseTimeoutForTest shortens the bound on the final flush to
// Options.SessionStore until restore is called.
func SetMirrorCloseTimeoutForTest(d time.Duration) (restore func()) {
	old := mirrorCloseTimeout
	mirrorCloseTimeout = d
	return func() { mirrorCloseTimeout = old }
}

// SetLeaseTTLForTest shortens how long a session's claim in
// Options.SessionStore holds until restore is called.
func SetLeaseTTLForTest(d time.Duration) (restore func()) {
	old := leaseTTL
	leaseTTL = d
	return func() { leaseTTL = old }
}

// SetSandboxKeysManagedPathForTest makes every session read the managed
// policy from path (sandbox_keys_e2e_test.go), until restore is called.
func SetSandboxKeysManagedPathForTest(path string) (restore func()) {
	old := testManagedPath.Swap(&path)
	return func() { testManagedPath.Store(old) }
}

// ActAsRootForTest makes the bypassPermissions check see effective uid 0
// (IS_SANDBOX is still read from the environment) until restore is called.
func ActAsRootForTest() (restore func()) {
	old := processIdentity
	processIdentity = func() (int, string) {
		_, sb := old()
		return 0, sb
	}
	return func() { processIdentity = old }
}

// UseManagedSettingsForTest makes every session read the managed-policy
// file at path until restore is called.
func UseManagedSettingsForTest(path string) (restore func()) {
	old := testManagedPath.Load()
	testManagedPath.Store(&path)
	return func() { testManagedPath.Store(old) }
}
