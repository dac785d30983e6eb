package openapi

import (
	"bytes"
	"runtime"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v4"

	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
)

// A JSON OpenAPI 3 document is decoded in pieces, on every core, rather than
// as one tree: the big maps (the paths and each map of the components) are
// cut, between members, into chunks of a few hundred kilobytes, and each
// chunk is read into nodes and decoded on its own. Two things come of it.
// The decode, most of a load's time, runs on all cores; and the node tree,
// several times the size of the document, never exists whole: a chunk's
// nodes are garbage once it is decoded, so the peak holds the decoded
// document and a few chunks.
//
// The result is what node.Decode(t) gives on jsonNode's tree: kin-openapi
// decodes a map value by value and a struct field by field, whichever order
// the values come in, so decoding the rest of a struct without its maps and
// setting the maps afterwards, each merged from its chunks, is the same
// decode. jsonsplit_test.go holds the two to deep equality.

// chunkBytes is about how much of the document one chunk holds (a variable
// so that tests can cut small documents too).
var chunkBytes = 256 << 10

// jsonDoc is a JSON document's top-level object read shallowly: every member
// but the paths and the components, whose values are only located.
type jsonDoc struct {
	data     []byte
	root     *yaml.Node // the top-level mapping; deferred members have a nil value
	deferred []deferredValue
}

// deferredValue is an object-valued member that was skipped, not read.
type deferredValue struct {
	index int // of the member's value in the mapping's Content
	key   string
	at    jsonPos
	end   int // offset just past the value
	depth int
}

// jsonPos is a place in the document with what the parser needs to resume
// there.
type jsonPos struct {
	pos, line, bol int
}

func (p *jsonParser) mark() jsonPos { return jsonPos{p.pos, p.line, p.bol} }

func (p *jsonParser) resume(at jsonPos) { p.pos, p.line, p.bol = at.pos, at.line, at.bol }

// scanJSON reads data's top-level object, leaving the values of "paths" and
// "components" for later when they are objects.
func scanJSON(data []byte) (*jsonDoc, error) {
	p := jsonParser{data: data}
	p.skipSpace()
	if p.pos >= len(p.data) || p.data[p.pos] != '{' {
		return nil, errNotJSON
	}
	d := &jsonDoc{data: data}
	root, deferred, err := p.shallowObject(0, func(key string) bool { return key == "paths" || key == "components" })
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return nil, p.errorf("data after the top-level value")
	}
	d.root, d.deferred = root, deferred
	return d, nil
}

// document returns the whole tree, as jsonNode reads it.
func (d *jsonDoc) document() (*yaml.Node, error) {
	for _, dv := range d.deferred {
		p := jsonParser{data: d.data}
		p.resume(dv.at)
		v, err := p.value(dv.depth)
		if err != nil {
			return nil, err
		}
		if p.pos != dv.end {
			return nil, p.errorf("malformed value of %q", dv.key)
		}
		d.root.Content[dv.index] = v
	}
	d.deferred = nil
	return &yaml.Node{Kind: yaml.DocumentNode, Line: 1, Column: 1, Content: []*yaml.Node{d.root}}, nil
}

// skipValue moves past the value at p.pos, which jsonlex's scanner checks
// as it finds its end: whoever reads the value later reads it strictly
// (UTF-8 and depth included) and must end where this did.
func (p *jsonParser) skipValue() error {
	start := p.pos
	end, err := jsonlex.SkipValue(p.data, p.pos)
	p.pos = end
	p.countLines(start)
	if err != nil {
		return p.errorf("%v", err)
	}
	return nil
}

// countLines accounts for the line breaks between start and p.pos.
func (p *jsonParser) countLines(start int) {
	skipped := p.data[start:p.pos]
	if n := bytes.Count(skipped, []byte{'\n'}); n > 0 {
		p.line += n
		p.bol = start + bytes.LastIndexByte(skipped, '\n') + 1
	}
}

// chunk is a run of consecutive members of one object.
type chunk struct {
	obj   jsonPos // the object's opening brace, where each chunk's node says it is
	at    jsonPos // the first member's name
	end   int     // the ',' or '}' after the last member
	depth int     // of the object
}

// chunks cuts the members of the object at at into runs of about chunkBytes,
// checking the object's own syntax and that no name repeats.
func (d *jsonDoc) chunks(at jsonPos, depth int) ([]chunk, error) {
	p := jsonParser{data: d.data}
	p.resume(at)
	obj := p.mark()
	p.pos++ // {
	p.skipSpace()
	var (
		out  []chunk
		seen = map[string]struct{}{}
		cur  = chunk{obj: obj, at: p.mark(), depth: depth}
	)
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		return nil, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("expected a member name")
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := seen[k]; dup {
			return nil, p.errorf("duplicate member %q", k)
		}
		seen[k] = struct{}{}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("expected ':' after member name")
		}
		p.pos++
		p.skipSpace()
		if err := p.skipValue(); err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of input in object")
		}
		switch p.data[p.pos] {
		case ',':
			if p.pos-cur.at.pos >= chunkBytes {
				cur.end = p.pos
				out = append(out, cur)
				p.pos++
				p.skipSpace()
				cur = chunk{obj: obj, at: p.mark(), depth: depth}
				continue
			}
			p.pos++
		case '}':
			cur.end = p.pos
			return append(out, cur), nil
		default:
			return nil, p.errorf("expected ',' or '}' in object")
		}
	}
}

// node reads the chunk's members into a mapping node, its nodes from a.
func (c chunk) node(data []byte, a *nodeArena) (*yaml.Node, error) {
	p := jsonParser{data: data, nodes: a}
	p.resume(c.obj)
	n := p.node(yaml.MappingNode, "!!map")
	n.Style = yaml.FlowStyle
	p.resume(c.at)
	for {
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("expected a member name")
		}
		key := p.node(yaml.ScalarNode, "!!str")
		key.Style = yaml.DoubleQuotedStyle
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		key.Value = k
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("expected ':' after member name")
		}
		p.pos++
		v, err := p.value(c.depth + 1)
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, key, v)
		p.skipSpace()
		if p.pos == c.end {
			return n, nil
		}
		if p.pos > c.end || p.data[p.pos] != ',' {
			return nil, p.errorf("malformed object")
		}
		p.pos++
		p.skipSpace()
	}
}

// decoding is one split decode: its tasks run on all cores, then its merges
// put the pieces together in order.
type decoding struct {
	data   []byte
	tasks  []func(*nodeArena) error // given their worker's arena
	merges []func()
}

// decodeOpenAPI3 decodes d into an openapi3.T, on all cores.
func (d *jsonDoc) decodeOpenAPI3() (*openapi3.T, error) {
	t := &openapi3.T{}
	dec := &decoding{data: d.data}
	rest := d.without()
	dec.tasks = append(dec.tasks, func(*nodeArena) error { return rest.Decode(t) })
	for _, dv := range d.deferred {
		switch dv.key {
		case "paths":
			paths := &openapi3.Paths{}
			if err := dec.paths(d, dv, paths); err != nil {
				return nil, err
			}
			dec.merges = append(dec.merges, func() { t.Paths = paths })
		case "components":
			c := &openapi3.Components{}
			if err := dec.components(d, dv, c); err != nil {
				return nil, err
			}
			dec.merges = append(dec.merges, func() { t.Components = c })
		}
	}
	if err := dec.run(); err != nil {
		return nil, err
	}
	return t, nil
}

// without returns the top-level mapping without its deferred members.
func (d *jsonDoc) without() *yaml.Node {
	n := *d.root
	n.Content = make([]*yaml.Node, 0, len(d.root.Content))
	for i := 0; i+1 < len(d.root.Content); i += 2 {
		if d.root.Content[i+1] != nil {
			n.Content = append(n.Content, d.root.Content[i], d.root.Content[i+1])
		}
	}
	return &n
}

func (dec *decoding) run() error {
	workers := min(runtime.GOMAXPROCS(0), len(dec.tasks))
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
		errs = make([]error, len(dec.tasks))
	)
	for range workers {
		wg.Go(func() {
			a := &nodeArena{}
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(dec.tasks) {
					return
				}
				errs[i] = dec.tasks[i](a)
				dec.tasks[i] = nil // its nodes may go
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for _, m := range dec.merges {
		m()
	}
	return nil
}

// paths decodes the paths object chunk by chunk into out.
func (dec *decoding) paths(d *jsonDoc, dv deferredValue, out *openapi3.Paths) error {
	chunks, err := d.chunks(dv.at, dv.depth)
	if err != nil {
		return err
	}
	if len(chunks) == 0 {
		return emptyMapping(dv).Decode(out)
	}
	parts := decodeChunks[openapi3.Paths](dec, chunks)
	dec.merges = append(dec.merges, func() {
		*out = parts[0]
		for _, part := range parts[1:] {
			for k, v := range part.Extensions {
				out.Extensions[k] = v
			}
			for k, v := range part.Map() {
				out.Set(k, v)
			}
		}
	})
	return nil
}

// components decodes the components object into out: its maps chunk by
// chunk, the rest as one node.
func (dec *decoding) components(d *jsonDoc, dv deferredValue, out *openapi3.Components) error {
	p := jsonParser{data: d.data}
	p.resume(dv.at)
	maps := func(key string) bool { _, ok := componentMaps[key]; return ok }
	node, deferred, err := p.shallowObject(dv.depth, maps)
	if err != nil {
		return err
	}
	if p.pos != dv.end {
		return p.errorf("malformed value of %q", dv.key)
	}
	inner := &jsonDoc{data: d.data, root: node, deferred: deferred}
	rest := inner.without()
	dec.tasks = append(dec.tasks, func(*nodeArena) error { return rest.Decode(out) })
	for _, m := range deferred {
		chunks, err := d.chunks(m.at, m.depth)
		if err != nil {
			return err
		}
		if err := componentMaps[m.key](dec, out, m, chunks); err != nil {
			return err
		}
	}
	return nil
}

// componentMaps are the map fields of openapi3.Components, by name.
var componentMaps = map[string]componentMap{
	"schemas":         mapField(func(c *openapi3.Components) *openapi3.Schemas { return &c.Schemas }),
	"parameters":      mapField(func(c *openapi3.Components) *openapi3.ParametersMap { return &c.Parameters }),
	"headers":         mapField(func(c *openapi3.Components) *openapi3.Headers { return &c.Headers }),
	"requestBodies":   mapField(func(c *openapi3.Components) *openapi3.RequestBodies { return &c.RequestBodies }),
	"responses":       mapField(func(c *openapi3.Components) *openapi3.ResponseBodies { return &c.Responses }),
	"securitySchemes": mapField(func(c *openapi3.Components) *openapi3.SecuritySchemes { return &c.SecuritySchemes }),
	"examples":        mapField(func(c *openapi3.Components) *openapi3.Examples { return &c.Examples }),
	"links":           mapField(func(c *openapi3.Components) *openapi3.Links { return &c.Links }),
	"callbacks":       mapField(func(c *openapi3.Components) *openapi3.Callbacks { return &c.Callbacks }),
}

// componentMap adds the tasks and the merge that decode one map of the
// components.
type componentMap func(dec *decoding, c *openapi3.Components, dv deferredValue, chunks []chunk) error

func mapField[M ~map[string]V, V any](field func(*openapi3.Components) *M) componentMap {
	return func(dec *decoding, c *openapi3.Components, dv deferredValue, chunks []chunk) error {
		return decodeMap(dec, field(c), dv, chunks)
	}
}

// decodeChunks queues a task per chunk that decodes it into its element of
// the returned slice; the slice is complete once the tasks have run.
func decodeChunks[T any](dec *decoding, chunks []chunk) []T {
	parts := make([]T, len(chunks))
	for i, c := range chunks {
		dec.tasks = append(dec.tasks, func(a *nodeArena) error {
			a.reset()
			n, err := c.node(dec.data, a)
			if err != nil {
				return err
			}
			return n.Decode(&parts[i])
		})
	}
	return parts
}

// decodeMap decodes one map chunk by chunk into *out, which is set once
// every task has run.
func decodeMap[M ~map[string]V, V any](dec *decoding, out *M, dv deferredValue, chunks []chunk) error {
	if len(chunks) == 0 {
		var m M
		if err := emptyMapping(dv).Decode(&m); err != nil {
			return err
		}
		dec.merges = append(dec.merges, func() { *out = m })
		return nil
	}
	parts := decodeChunks[M](dec, chunks)
	dec.merges = append(dec.merges, func() {
		m := parts[0]
		for _, part := range parts[1:] {
			for k, v := range part {
				m[k] = v
			}
		}
		*out = m
	})
	return nil
}

// emptyMapping is the node of an object without members.
func emptyMapping(dv deferredValue) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle, Line: dv.at.line + 1, Column: dv.at.pos - dv.at.bol + 1}
}
