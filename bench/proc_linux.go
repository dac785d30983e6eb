package main

import "syscall"

// childAttr makes a child die with this process, so an interrupted run
// leaves no servers behind.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
