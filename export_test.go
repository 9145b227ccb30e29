package agentloop

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
