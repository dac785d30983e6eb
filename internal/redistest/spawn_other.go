//go:build !linux

package redistest

import "os/exec"

// startCmd starts cmd. Without Linux's parent-death signal, only the
// owner's cleanup stops the process.
func startCmd(cmd *exec.Cmd) error { return cmd.Start() }
