//go:build !linux && !windows

package main

import (
	"os/exec"
	"syscall"
)

// startChild starts a demo-cluster process in its own process group, so a
// terminal's Ctrl-C reaches only demo-cluster, which stops the children in
// order. Without Linux's parent-death signal, a demo-cluster killed with
// SIGKILL leaves its children running.
func startChild(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd.Start()
}
