package toolgen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Print writes set for the `tools` command. Format "json" is exactly the
// result tools/list returns, {"tools":[...]}, indented; "table" is one line
// per tool: name, method and path, hints, the description's first line.
// Warnings are the caller's to print.
func Print(w io.Writer, set *Set, format string) error {
	switch format {
	case "json":
		return printJSON(w, set)
	case "table":
		return printTable(w, set)
	}
	return fmt.Errorf("toolgen: unknown format %q (want json or table)", format)
}

// printJSON writes {"tools":[...]} as tools/list returns it, indented, one
// tool at a time: a large document's output never sits in memory whole.
func printJSON(w io.Writer, set *Set) error {
	bw := bufio.NewWriter(w)
	tools := set.Tools()
	_, _ = bw.WriteString("{\n  \"tools\": [")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("    ", "  ")
	for i, t := range tools {
		buf.Reset()
		if err := enc.Encode(t); err != nil {
			return fmt.Errorf("toolgen: encode tool %s: %w", t.Name, err)
		}
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		_, _ = bw.WriteString("\n    ")
		_, _ = bw.Write(bytes.TrimRight(buf.Bytes(), "\n"))
	}
	if len(tools) > 0 {
		_, _ = bw.WriteString("\n  ")
	}
	_, _ = bw.WriteString("]\n}\n")
	return bw.Flush()
}

const tableDescription = 72

func printTable(w io.Writer, set *Set) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tMETHOD PATH\tHINTS\tDESCRIPTION")
	for _, t := range set.Tools() {
		method, path := "", ""
		if t.binding != nil {
			method, path = t.binding.Method, t.binding.Path
		}
		desc, _, _ := strings.Cut(t.Description, "\n")
		fmt.Fprintf(tw, "%s\t%s %s\t%s\t%s\n", t.Name, method, path, hints(t.Annotations), truncateText(strings.TrimSpace(desc), tableDescription))
	}
	return tw.Flush()
}

// hints abbreviates the annotations: ro (read-only), destructive,
// idempotent; "-" when none holds.
func hints(a *Annotations) string {
	if a == nil {
		return "-"
	}
	var h []string
	is := func(b *bool) bool { return b != nil && *b }
	if is(a.ReadOnlyHint) {
		h = append(h, "read-only")
	} else if is(a.DestructiveHint) {
		h = append(h, "destructive")
	}
	if is(a.IdempotentHint) {
		h = append(h, "idempotent")
	}
	if len(h) == 0 {
		return "-"
	}
	return strings.Join(h, ",")
}
