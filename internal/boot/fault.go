//go:build !faultinject

package boot

// injectFault is a no-op in the shipped binary; a build with the
// faultinject tag panics in the steps the command line names (fault_inject.go).
func injectFault(string) {}
