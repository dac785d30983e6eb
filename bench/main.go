package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// options are the command's flags.
type options struct {
	out      string
	quick    bool
	rounds   int
	phase    time.Duration // length of each load phase
	specsDir string
	sessions int    // idle sessions created for the memory figures
	only     string // comma-separated target keys to measure (the proxy always is)
	calls    bool   // measure the calls only: skip allocations, GitHub, sessions
	docOnly  bool   // measure GitHub's description only: no calls, Redis or sessions
	sizing   bool   // measure memory per session, stream and subscription only
	streams  int    // open GET streams for -sizing
}

func main() {
	var o options
	role := flag.String("role", "", "internal: run a helper (backend, proxy, rr, decode) instead of the benchmark")
	flag.StringVar(&o.out, "out", "", "write the results (markdown) to this file as well as stdout")
	flag.BoolVar(&o.quick, "quick", false, "short phases and fewer repetitions (about 2 minutes instead of 10)")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds of interleaved measurements (medians are reported)")
	flag.DurationVar(&o.phase, "phase", 0, "length of each load phase (default 3s; 400ms with -quick)")
	flag.StringVar(&o.specsDir, "specs", "", "directory holding github-api.github.com.json (default $MCPGW_SPECS_DIR, else ../shared/specs)")
	flag.IntVar(&o.sessions, "sessions", 0, "idle sessions created for the memory figures (default 10000; 2000 with -quick)")
	flag.StringVar(&o.only, "targets", "", "measure only these targets, comma-separated: direct, gw-mem, gw-stateless, gw-auth, gw-auth-stateless, gw-redis, gw-redis-3, proxy-3, sdk (the proxy always)")
	flag.BoolVar(&o.calls, "calls-only", false, "measure the calls only (no allocations, GitHub or session figures)")
	flag.BoolVar(&o.docOnly, "doc-only", false, "measure GitHub's description only (load, generate, print, serving start), no calls, Redis or sessions")
	flag.BoolVar(&o.sizing, "sizing", false, "measure memory per session, per open GET stream (replica) and per subscription (Redis) only, with -sessions sessions")
	flag.IntVar(&o.streams, "streams", 1000, "open GET streams for -sizing")
	flag.Parse()

	if *role != "" {
		if err := runRole(*role, flag.Args()); err != nil {
			fmt.Fprintf(os.Stderr, "bench -role %s: %v\n", *role, err)
			os.Exit(1)
		}
		return
	}
	if o.phase == 0 {
		o.phase = 3 * time.Second
		if o.quick {
			o.phase = 400 * time.Millisecond
		}
	}
	if o.sessions == 0 {
		o.sessions = 10000
		if o.quick {
			o.sessions = 2000
		}
	}
	if o.rounds < 1 {
		fmt.Fprintln(os.Stderr, "bench: -rounds must be at least 1")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

func run(o options) error {
	started := time.Now()
	root, err := repoRoot()
	if err != nil {
		return err
	}
	if o.specsDir == "" {
		o.specsDir = os.Getenv("MCPGW_SPECS_DIR")
	}
	if o.specsDir == "" {
		o.specsDir = filepath.Join(root, "..", "shared", "specs")
	}
	tmp, err := os.MkdirTemp("", "mcpgw-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	logf("building binaries")
	bins, err := build(root, tmp)
	if err != nil {
		return err
	}
	r := &runner{opts: o, root: root, tmp: tmp, bins: bins, hc: newLoadClient(), res: &results{}}
	defer r.stopAll()
	var report string
	switch {
	case o.sizing:
		report = r.sizing()
	case o.docOnly:
		r.githubFigures()
	default:
		if err := r.measure(); err != nil {
			return err
		}
	}
	r.res.took = time.Since(started)

	if report == "" {
		report = r.report()
	}
	fmt.Print(report)
	if o.out != "" {
		if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(o.out, []byte(report), 0o644); err != nil {
			return err
		}
		logf("wrote %s", o.out)
	}
	return nil
}

// binaries are the programs a run starts.
type binaries struct {
	gateway, sdk, self string
}

// build compiles the gateway and the SDK server; the helpers are this
// program itself.
func build(root, dir string) (binaries, error) {
	b := binaries{gateway: filepath.Join(dir, "mcp-gateway"), sdk: filepath.Join(dir, "sdkserver")}
	for _, t := range []struct{ out, pkg string }{{b.gateway, "./cmd/mcp-gateway"}, {b.sdk, "./bench/sdkserver"}} {
		cmd := exec.Command("go", "build", "-o", t.out, t.pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return b, fmt.Errorf("go build %s: %v\n%s", t.pkg, err, out)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return b, err
	}
	b.self = self
	return b, nil
}

// repoRoot finds the module root from the working directory upwards.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(data), "module github.com/mcp-gateway/mcp-gateway\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from inside the mcp-gateway module (no go.mod found above the working directory)")
		}
		dir = parent
	}
}

// logf reports progress on stderr; the results go to stdout.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s bench: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
