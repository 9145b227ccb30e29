package agentloop

// SetManagedSettingsPathForTest makes every session of this process read
// its managed policy from path instead of the platform's managed-settings
// file, until restore is called. Tests that use it must not run in
// parallel with other tests of the package.
func SetManagedSettingsPathForTest(path string) (restore func()) {
	old := testManagedPath.Swap(&path)
	return func() { testManagedPath.Store(old) }
}
