package agentloop

// SetSandboxKeysManagedPathForTest makes every session read the managed
// policy from path (sandbox_keys_e2e_test.go), until restore is called.
func SetSandboxKeysManagedPathForTest(path string) (restore func()) {
	old := testManagedPath.Swap(&path)
	return func() { testManagedPath.Store(old) }
}
