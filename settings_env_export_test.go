package agentloop

import "testing"

// ActAsRootForTest makes the bypassPermissions check see effective uid 0
// (IS_SANDBOX is still read from the environment) until the test ends.
func ActAsRootForTest(t testing.TB) {
	old := processIdentity
	processIdentity = func() (int, string) {
		_, sb := old()
		return 0, sb
	}
	t.Cleanup(func() { processIdentity = old })
}

// UseManagedSettingsForTest makes every session read the managed-policy
// file at path until the test ends.
func UseManagedSettingsForTest(t testing.TB, path string) {
	old := testManagedPath.Load()
	testManagedPath.Store(&path)
	t.Cleanup(func() { testManagedPath.Store(old) })
}
