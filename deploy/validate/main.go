package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

const usage = `usage: validate [-gateway-out DIR] [-print] INPUT...

INPUT is a file of YAML documents (helm template output; "-" reads standard
input) or a directory holding a kustomization.yaml, which is built as
"kubectl kustomize DIR" would. Each input is one set: its documents are
checked against each other. Exit status 1 when any check fails.
`

func main() {
	gatewayOut := flag.String("gateway-out", "", "write each gateway container's arguments, literal environment and mounted ConfigMap files as DIR/<n>.json (for cmd/mcp-gateway's TestRenderedGatewayConfigsLoad)")
	printDocs := flag.Bool("print", false, "print every set's documents (a kustomize build's output) to standard output")
	flag.Usage = func() { fmt.Fprint(os.Stderr, usage); flag.PrintDefaults() }
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *gatewayOut != "" {
		if err := os.MkdirAll(*gatewayOut, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "validate:", err)
			os.Exit(2)
		}
	}
	failed := false
	written := 0
	for _, in := range flag.Args() {
		data, err := read(in)
		if err != nil {
			fmt.Fprintf(os.Stderr, "FAIL %s: %v\n", in, err)
			failed = true
			continue
		}
		if *printDocs {
			os.Stdout.Write(data)
		}
		s, errs := load(data)
		for _, e := range errs {
			fmt.Fprintf(os.Stderr, "FAIL %s: %v\n", in, e)
		}
		if len(errs) > 0 {
			failed = true
			continue
		}
		if *gatewayOut != "" {
			for _, g := range s.gateways {
				g.Source = in
				b, _ := json.MarshalIndent(g, "", "  ")
				written++
				if err := os.WriteFile(filepath.Join(*gatewayOut, fmt.Sprintf("%03d.json", written)), b, 0o644); err != nil {
					fmt.Fprintln(os.Stderr, "validate:", err)
					os.Exit(2)
				}
			}
		}
		fmt.Fprintf(os.Stderr, "ok   %s: %s\n", in, s.summary())
	}
	if failed {
		os.Exit(1)
	}
}

// read returns the YAML documents of one input.
func read(in string) ([]byte, error) {
	if in == "-" {
		return io.ReadAll(os.Stdin)
	}
	fi, err := os.Stat(in)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return os.ReadFile(in)
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), in)
	if err != nil {
		return nil, fmt.Errorf("kustomize build: %w", err)
	}
	return m.AsYaml()
}

// load decodes one input's documents and, when every one decodes, checks
// them against each other (else the cross-checks would repeat the errors).
func load(data []byte) (*set, []error) {
	docs, errs := decodeAll(data)
	s := &set{docs: docs}
	if len(errs) == 0 {
		errs = s.check()
	}
	return s, errs
}

// decodeAll splits data into documents and decodes each strictly; empty
// documents (Helm renders one for every template switched off) are skipped.
func decodeAll(data []byte) ([]*doc, []error) {
	r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs []*doc
	var errs []error
	for i := 0; ; i++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("document %d: %w", i, err))
			break
		}
		d, err := decode(raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("document %d (%s): %w", i, firstLines(raw), err))
			continue
		}
		if d != nil {
			docs = append(docs, d)
		}
	}
	if len(docs) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("no documents"))
	}
	return docs, errs
}

var sourceComment = regexp.MustCompile(`(?m)^# Source: .*$`)

// firstLines names a document in an error: Helm's "# Source:" line, else
// its first line.
func firstLines(raw []byte) string {
	if m := sourceComment.Find(raw); m != nil {
		return strings.TrimPrefix(string(m), "# ")
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(raw)), "\n")
	return line
}

func (s *set) summary() string {
	n := map[string]int{}
	for _, d := range s.docs {
		n[d.kind]++
	}
	var parts []string
	for k, c := range n {
		parts = append(parts, fmt.Sprintf("%d %s", c, k))
	}
	sort.Strings(parts)
	out := fmt.Sprintf("%d documents (%s)", len(s.docs), strings.Join(parts, ", "))
	if len(s.gateways) > 0 {
		out += fmt.Sprintf(", %d gateway container(s)", len(s.gateways))
	}
	return out
}
