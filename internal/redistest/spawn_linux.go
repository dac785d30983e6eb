//go:build linux

package redistest

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

var (
	spawnOnce sync.Once
	spawnReqs chan spawnReq
)

type spawnReq struct {
	cmd  *exec.Cmd
	errc chan error
}

// startCmd starts cmd with SIGKILL as its parent-death signal, so that it
// dies with the test binary whatever way the binary ends.
//
// Linux sends the parent-death signal when the forking thread exits, and Go
// retires threads (for example when a goroutine exits while locked to one),
// which would kill a healthy child early (golang.org/issue/27505). So every
// child is forked by one goroutine that locks its thread and never returns:
// that thread lives exactly as long as the process.
func startCmd(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnReqs = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked; see above
			for r := range spawnReqs {
				r.errc <- r.cmd.Start()
			}
		}()
	})
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	errc := make(chan error, 1)
	spawnReqs <- spawnReq{cmd: cmd, errc: errc}
	return <-errc
}
