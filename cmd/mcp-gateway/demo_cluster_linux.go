//go:build linux

package main

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

var (
	forkOnce sync.Once
	forkReqs chan forkReq
)

type forkReq struct {
	cmd  *exec.Cmd
	errc chan error
}

// startChild starts a demo-cluster process in its own process group (a
// terminal's Ctrl-C reaches only demo-cluster, which stops the children in
// order) with SIGKILL as its parent-death signal (a killed demo-cluster
// leaves nothing behind).
//
// Linux sends the parent-death signal when the forking thread exits, and Go
// retires threads, which would kill a healthy child early
// (golang.org/issue/27505): every child is forked by one goroutine locked
// to a thread that lives as long as the process.
func startChild(cmd *exec.Cmd) error {
	forkOnce.Do(func() {
		forkReqs = make(chan forkReq)
		go func() {
			runtime.LockOSThread() // never unlocked; see above
			for r := range forkReqs {
				r.errc <- r.cmd.Start()
			}
		}()
	})
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	errc := make(chan error, 1)
	forkReqs <- forkReq{cmd: cmd, errc: errc}
	return <-errc
}
