package toolgen

import (
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

func printJSON(w io.Writer, set *Set) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	tools := set.Tools()
	if tools == nil {
		tools = []*Tool{}
	}
	if err := enc.Encode(struct {
		Tools []*Tool `json:"tools"`
	}{tools}); err != nil {
		return fmt.Errorf("toolgen: encode tools: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
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
