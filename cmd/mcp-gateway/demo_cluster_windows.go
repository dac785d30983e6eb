package main

import "os/exec"

// startChild starts a demo-cluster process. Windows has neither process
// groups of this kind nor a parent-death signal: a demo-cluster that is
// killed leaves its children running, and stopping one kills it.
func startChild(cmd *exec.Cmd) error { return cmd.Start() }
