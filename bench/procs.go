package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is a server process this run started.
type proc struct {
	name   string
	cmd    *exec.Cmd
	url    string // the first http:// URL the process printed
	stderr *tail
	exited chan struct{}
}

// startTimeout bounds how long a server may take to print its URL (the
// gateway loading GitHub's description takes a few seconds on 2 cores).
const startTimeout = 60 * time.Second

// startProc runs argv and waits for the first stdout line naming an
// http:// URL. The process is killed if this process dies first.
func startProc(name string, argv []string, env ...string) (*proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = childAttr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &proc{name: name, cmd: cmd, stderr: &tail{max: 4096}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if i := strings.Index(sc.Text(), "http://"); i >= 0 {
				lines <- strings.TrimSpace(sc.Text()[i:])
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case p.url = <-lines:
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("%s exited during start:\n%s", name, p.stderr)
	case <-time.After(startTimeout):
		p.stop()
		return nil, fmt.Errorf("%s did not start within %s:\n%s", name, startTimeout, p.stderr)
	}
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// stop ends the process: SIGTERM, then SIGKILL after a grace period.
func (p *proc) stop() {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// clockTicks is the unit of utime and stime in /proc/<pid>/stat.
var clockTicks = func() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && n > 0 {
			return float64(n)
		}
	}
	return 100
}()

// cpuTime is the user plus system CPU time a process has used so far, over
// all its threads.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after it do not.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("malformed /proc stat times")
	}
	return time.Duration(float64(ut+st) / clockTicks * float64(time.Second)), nil
}

// cpuTimes sums cpuTime over pids.
func cpuTimes(pids []int) time.Duration {
	var total time.Duration
	for _, pid := range pids {
		d, err := cpuTime(pid)
		if err == nil {
			total += d
		}
	}
	return total
}

// memStatus reads VmRSS and VmHWM (peak RSS) of a process, in bytes.
func memStatus(pid int) (rss, peak int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			rss = n << 10
		case "VmHWM":
			peak = n << 10
		}
	}
	return rss, peak
}

// runMeasured runs argv to completion with stdout discarded and returns its
// wall time and peak resident memory (from the child's rusage).
func runMeasured(argv []string) (time.Duration, int64, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = childAttr()
	errBuf := &tail{max: 2048}
	cmd.Stderr = errBuf
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w\n%s", argv[0], err, errBuf)
	}
	var peak int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peak = ru.Maxrss << 10 // kilobytes on Linux
	}
	return wall, peak, nil
}

// machineBusy is the CPU time all cores have spent busy since boot (from
// /proc/stat), and the time they could have spent.
func machineBusy() (busy, total time.Duration) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0
	}
	var sum, idle uint64
	for i, v := range f[1:] {
		n, _ := strconv.ParseUint(v, 10, 64)
		if i >= 8 { // guest time is already counted in user time
			break
		}
		sum += n
		if i == 3 || i == 4 { // idle, iowait
			idle += n
		}
	}
	tick := func(n uint64) time.Duration { return time.Duration(float64(n) / clockTicks * float64(time.Second)) }
	return tick(sum - idle), tick(sum)
}

// loadAverage is the first field of /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
