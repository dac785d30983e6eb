package search

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// field is one part of a tool that the index reads.
type field uint8

const (
	fieldName        field = iota // tool name and operationId
	fieldSummary                  // summary, else title
	fieldTags                     // tags
	fieldPath                     // literal path segments
	fieldPathParams               // the words inside {param}
	fieldDescription              // first descriptionBytes of the description
	fieldArgs                     // argument names: parameters and flattened body properties
	numFields
)

// fieldWeights are BM25F's weight and length normalisation (b) per field:
// what names an operation (name, summary) counts most, its route next,
// prose and argument names little: they are long, and shared by many
// operations.
var fieldWeights = [numFields]struct{ weight, b float64 }{
	fieldName:        {3.0, 0.5},
	fieldSummary:     {3.0, 0.5},
	fieldTags:        {1.0, 0.3},
	fieldPath:        {1.5, 0.5},
	fieldPathParams:  {0.3, 0.5},
	fieldDescription: {0.5, 0.75},
	fieldArgs:        {0.3, 0.75},
}

// k1 is BM25's term-frequency saturation.
const k1 = 1.2

// descriptionBytes is how much of a description is read: its opening says
// what the operation does; the rest is mostly about tokens, scopes and
// media types.
const descriptionBytes = 300

// maxFieldBytes bounds the text read from any other field, so that one
// odd document cannot make the index large.
const maxFieldBytes = 2048

// Index ranks a fixed set of tools. It is built once per tool set by New,
// is immutable, and is safe for concurrent use.
type Index struct {
	docs     []doc
	postings map[string][]posting // by term, in document order
}

type doc struct {
	tool   *toolgen.Tool
	method string
	// name and summary are the terms of those fields in order, for the
	// phrase bonus.
	name, summary []string
}

// posting is one tool's BM25F pseudo-frequency for a term: Σ over fields
// of weight·tf / (1 − b + b·len/avglen). It does not depend on the query.
type posting struct {
	doc int32
	tf  float32
}

// New indexes tools, in the order given: ties in Search keep it. A nil
// tool is never found.
func New(tools []*toolgen.Tool) *Index {
	ix := &Index{docs: make([]doc, len(tools)), postings: map[string][]posting{}}
	fields := make([][numFields][]string, len(tools))
	var total [numFields]int
	for i, t := range tools {
		if t == nil {
			continue
		}
		fields[i] = fieldTerms(t)
		for f := range numFields {
			total[f] += len(fields[i][f])
		}
		method, _ := t.Route()
		ix.docs[i] = doc{tool: t, method: method, name: fields[i][fieldName], summary: fields[i][fieldSummary]}
	}
	var avg [numFields]float64
	for f := range numFields {
		avg[f] = max(float64(total[f])/float64(max(len(tools), 1)), 1)
	}
	counts := map[string]*[numFields]int{}
	var order []string // this tool's terms in first-seen order, for a deterministic build
	for i := range tools {
		clear(counts)
		order = order[:0]
		for f := range numFields {
			for _, term := range fields[i][f] {
				c := counts[term]
				if c == nil {
					c = new([numFields]int)
					counts[term] = c
					order = append(order, term)
				}
				c[f]++
			}
		}
		for _, term := range order {
			c := counts[term]
			var tf float64
			for f := range numFields {
				if c[f] == 0 {
					continue
				}
				fw := fieldWeights[f]
				norm := 1 - fw.b + fw.b*float64(len(fields[i][f]))/avg[f]
				tf += fw.weight * float64(c[f]) / norm
			}
			ix.postings[term] = append(ix.postings[term], posting{doc: int32(i), tf: float32(tf)})
		}
	}
	for term, ps := range ix.postings {
		ix.postings[term] = slices.Clip(ps)
	}
	return ix
}

// fieldTerms reads the fields of a tool: from its operation when it has
// one, else from the tool's own name, title and description.
func fieldTerms(t *toolgen.Tool) [numFields][]string {
	var fs [numFields][]string
	fs[fieldName] = terms(nil, clip(t.Name, maxFieldBytes))
	b := t.Binding
	if b == nil || b.Operation == nil {
		fs[fieldSummary] = terms(nil, clip(t.Title, maxFieldBytes))
		fs[fieldDescription] = terms(nil, clip(t.Description, descriptionBytes))
		return fs
	}
	o := b.Operation
	if id := o.OperationID; id != "" {
		if idTerms := terms(nil, clip(id, maxFieldBytes)); !slices.Equal(idTerms, fs[fieldName]) {
			fs[fieldName] = append(fs[fieldName], idTerms...)
		}
	}
	summary := o.Summary
	if summary == "" {
		summary = t.Title
	}
	fs[fieldSummary] = terms(nil, clip(summary, maxFieldBytes))
	for _, tag := range o.Tags {
		fs[fieldTags] = terms(fs[fieldTags], clip(tag, maxFieldBytes))
	}
	fs[fieldPath], fs[fieldPathParams] = pathTerms(clip(b.Path, maxFieldBytes))
	fs[fieldDescription] = terms(nil, clip(o.Description, descriptionBytes))
	for _, p := range b.Params {
		fs[fieldArgs] = terms(fs[fieldArgs], p.Arg)
	}
	if body := b.Body; body != nil {
		if body.Flattened {
			args := make([]string, 0, len(body.Props))
			for arg := range body.Props {
				args = append(args, arg)
			}
			slices.Sort(args)
			for _, arg := range args {
				fs[fieldArgs] = terms(fs[fieldArgs], arg)
			}
		} else if body.Arg != "" {
			fs[fieldArgs] = terms(fs[fieldArgs], body.Arg)
		}
	}
	return fs
}

// pathTerms splits a path template into the terms of its literal text and
// those of its {param} names.
func pathTerms(path string) (literal, params []string) {
	for path != "" {
		open := strings.IndexByte(path, '{')
		if open < 0 {
			return terms(literal, path), params
		}
		literal = terms(literal, path[:open])
		rest := path[open+1:]
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return terms(literal, rest), params
		}
		params = terms(params, rest[:end])
		path = rest[end+1:]
	}
	return literal, params
}

// clip cuts s to at most n bytes, at the last space before the cut when
// there is one (so that no word is cut in two), else at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := s[:n]
	if i := strings.LastIndexAny(cut, " \t\n"); i > 0 {
		return cut[:i]
	}
	for len(cut) > 0 && !utf8.RuneStart(s[len(cut)]) {
		cut = cut[:len(cut)-1]
	}
	return cut
}
