package toolgen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
)

// Print writes set for the `tools` command. Format "json" is exactly the
// result tools/list returns, {"tools":[...]}, indented; "table" is one line
// per tool: name, method and path, hints, the description's first line.
// Warnings are the caller's to print.
func Print(w io.Writer, set *Set, format string) error { return PrintTools(w, set.Tools(), format) }

// PrintTools is Print of a list of tools (a part of a set, or its
// InlineTools).
func PrintTools(w io.Writer, tools []*Tool, format string) error {
	switch format {
	case "json":
		return printJSON(w, tools)
	case "table":
		return printTable(w, tools)
	}
	return fmt.Errorf("toolgen: unknown format %q (want json or table)", format)
}

// printJSON writes {"tools":[...]} as tools/list returns it, indented the way
// encoding/json's Encoder.SetIndent("", "  ") would, one tool at a time: a
// large document's output never sits in memory whole. The tools' schemas
// are JSON we generated, so they are indented as they are copied rather than
// compacted and re-scanned by encoding/json (which made printing GitHub's
// tools a third of the command's time); print_test.go holds the output to
// encoding/json's byte for byte.
func printJSON(w io.Writer, tools []*Tool) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	_, _ = bw.WriteString("{\n  \"tools\": [")
	var buf []byte
	for i, t := range tools {
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		_, _ = bw.WriteString("\n    ")
		var err error
		if buf, err = appendToolIndented(buf[:0], t); err != nil {
			return fmt.Errorf("toolgen: encode tool %s: %w", t.Name, err)
		}
		_, _ = bw.Write(buf)
	}
	if len(tools) > 0 {
		_, _ = bw.WriteString("\n  ")
	}
	_, _ = bw.WriteString("]\n}\n")
	return bw.Flush()
}

// Where a tool's members and their values sit in printJSON's output.
const (
	toolIndent   = "    "
	memberIndent = "      "
)

// appendToolIndented appends t as encoding/json would marshal it, indented
// as an element of the tools array.
func appendToolIndented(b []byte, t *Tool) ([]byte, error) {
	member := func(name string) {
		b = append(b, "\n"+memberIndent+`"`...)
		b = append(b, name...)
		b = append(b, `": `...)
	}
	b = append(b, '{')
	member("name")
	b = jsonlex.AppendString(b, t.Name, false)
	if t.Title != "" {
		b = append(b, ',')
		member("title")
		b = jsonlex.AppendString(b, t.Title, false)
	}
	b = append(b, ',')
	member("description")
	b = jsonlex.AppendString(b, t.Description, false)
	b = append(b, ',')
	member("inputSchema")
	var err error
	if b, err = appendIndented(b, t.InputSchema); err != nil {
		return nil, err
	}
	if len(t.OutputSchema) > 0 {
		b = append(b, ',')
		member("outputSchema")
		if b, err = appendIndented(b, t.OutputSchema); err != nil {
			return nil, err
		}
	}
	if t.Annotations != nil {
		var a bytes.Buffer
		enc := json.NewEncoder(&a)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(t.Annotations); err != nil {
			return nil, err
		}
		b = append(b, ',')
		member("annotations")
		if b, err = appendIndented(b, bytes.TrimRight(a.Bytes(), "\n")); err != nil {
			return nil, err
		}
	}
	b = append(b, "\n"+toolIndent+"}"...)
	return b, nil
}

// appendIndented appends the JSON value src as a member value of a tool,
// indented as json.Indent(dst, src, memberIndent, "  ") would. src is what
// encoding/json or the schema generator wrote, valid and compact: this
// checks only the brackets and the absence of spaces, and leaves input that
// fails either to json.Indent, which then also reports what is wrong.
func appendIndented(b, src []byte) ([]byte, error) {
	start := len(b)
	var open []byte // the brackets not yet closed
	newline := func(depth int) {
		b = append(b, '\n')
		b = append(b, memberIndent...)
		for range depth {
			b = append(b, "  "...)
		}
	}
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(src) {
				return slowIndent(b[:start], src)
			}
			b = append(b, src[i:j+1]...)
			i = j
		case '{', '[':
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				if src[i+1] != c+2 { // '{'+2 is '}', '['+2 is ']'
					return slowIndent(b[:start], src)
				}
				b = append(b, c, src[i+1])
				i++
				continue
			}
			open = append(open, c)
			b = append(b, c)
			newline(len(open))
		case '}', ']':
			if len(open) == 0 || open[len(open)-1]+2 != c {
				return slowIndent(b[:start], src)
			}
			open = open[:len(open)-1]
			newline(len(open))
			b = append(b, c)
		case ',':
			b = append(b, c)
			newline(len(open))
		case ':':
			b = append(b, ':', ' ')
		case ' ', '\t', '\r', '\n':
			return slowIndent(b[:start], src) // not compact
		default:
			b = append(b, c)
		}
	}
	if len(open) != 0 {
		return slowIndent(b[:start], src)
	}
	return b, nil
}

func slowIndent(b, src []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Indent(&buf, src, memberIndent, "  "); err != nil {
		return nil, err
	}
	return append(b, buf.Bytes()...), nil
}

const tableDescription = 72

func printTable(w io.Writer, tools []*Tool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tMETHOD PATH\tHINTS\tDESCRIPTION")
	for _, t := range tools {
		method, path := "", ""
		if t.Binding != nil {
			method, path = t.Binding.Method, t.Binding.Path
		}
		desc, _, _ := strings.Cut(t.Description, "\n")
		fmt.Fprintf(tw, "%s\t%s %s\t%s\t%s\n", t.Name, method, path, hints(t.Annotations), TruncateText(strings.TrimSpace(desc), tableDescription))
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
