package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"go.yaml.in/yaml/v4"

	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
)

// kin-openapi decodes every document through the YAML parser, JSON included
// (JSON is YAML). That parser is slow on large flow-style input: it spends
// about two seconds and a gigabyte of garbage on GitHub's 13 MB description,
// mostly shuffling its token queue. jsonNode reads the same bytes into the
// yaml.Node tree kin-openapi's decoders consume, in a small fraction of that,
// tagging every scalar exactly as the YAML resolver would.
//
// It accepts only well-formed JSON with an object at the top. On any error the
// caller falls back to kin-openapi's own decoding, which then also produces
// the error message users see, so this path never changes what loads.

// maxJSONDepth bounds nesting; deeper input takes the fallback path.
const maxJSONDepth = 512

var errNotJSON = errors.New("not a JSON object")

func jsonNode(data []byte) (*yaml.Node, error) {
	p := jsonParser{data: data}
	p.skipSpace()
	if p.pos >= len(p.data) || p.data[p.pos] != '{' {
		return nil, errNotJSON
	}
	root, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return nil, p.errorf("data after the top-level value")
	}
	return &yaml.Node{Kind: yaml.DocumentNode, Line: 1, Column: 1, Content: []*yaml.Node{root}}, nil
}

type jsonParser struct {
	data  []byte
	pos   int
	line  int        // zero-based; nodes carry line+1
	bol   int        // offset of the current line's first byte
	nodes *nodeArena // nil until the first node
}

func (p *jsonParser) errorf(format string, args ...any) error {
	return fmt.Errorf("json: line %d: %s", p.line+1, fmt.Sprintf(format, args...))
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\r':
		case '\n':
			p.line++
			p.bol = p.pos + 1
		default:
			return
		}
		p.pos++
	}
}

func (p *jsonParser) node(kind yaml.Kind, tag string) *yaml.Node {
	if p.nodes == nil {
		p.nodes = &nodeArena{}
	}
	n := p.nodes.alloc()
	n.Kind, n.Tag, n.Line, n.Column = kind, tag, p.line+1, p.pos-p.bol+1
	return n
}

// nodeArena hands out nodes from blocks it keeps: a large document has
// millions of them. The split decode gives each worker one and reads chunk
// after chunk into the same nodes, which are garbage once their chunk is
// decoded (the decoded document keeps none of them).
type nodeArena struct {
	blocks      [][]yaml.Node
	block, next int // the next free node
}

const arenaBlock = 4096

func (a *nodeArena) alloc() *yaml.Node {
	if a.block == len(a.blocks) {
		a.blocks = append(a.blocks, make([]yaml.Node, arenaBlock))
	}
	n := &a.blocks[a.block][a.next]
	a.next++
	if a.next == arenaBlock {
		a.block, a.next = a.block+1, 0
	}
	return n
}

// reset frees every node, zeroed for reuse.
func (a *nodeArena) reset() {
	for _, b := range a.blocks[:a.block] {
		clear(b)
	}
	if a.block < len(a.blocks) {
		clear(a.blocks[a.block][:a.next])
	}
	a.block, a.next = 0, 0
}

func (p *jsonParser) value(depth int) (*yaml.Node, error) {
	if depth > maxJSONDepth {
		return nil, p.errorf("nested too deeply")
	}
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		n := p.node(yaml.ScalarNode, "!!str")
		n.Style = yaml.DoubleQuotedStyle
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		n.Value = s
		return n, nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	default:
		for _, lit := range [...]struct{ text, tag string }{{"true", "!!bool"}, {"false", "!!bool"}, {"null", "!!null"}} {
			if len(p.data)-p.pos >= len(lit.text) && string(p.data[p.pos:p.pos+len(lit.text)]) == lit.text {
				n := p.node(yaml.ScalarNode, lit.tag)
				n.Value = lit.text
				p.pos += len(lit.text)
				return n, nil
			}
		}
		return nil, p.errorf("unexpected character %q", c)
	}
}

func (p *jsonParser) object(depth int) (*yaml.Node, error) {
	n, _, err := p.shallowObject(depth, nil)
	return n, err
}

// shallowObject reads the object at p.pos, except that the object values of
// the members lazy names (if lazy is not nil) are only skipped and located.
func (p *jsonParser) shallowObject(depth int, lazy func(key string) bool) (*yaml.Node, []deferredValue, error) {
	n := p.node(yaml.MappingNode, "!!map")
	n.Style = yaml.FlowStyle
	p.pos++ // {

	// Past a few members, duplicates are found with a map; below, a scan
	// is cheaper.
	var (
		seen     map[string]struct{}
		deferred []deferredValue
	)
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return n, nil, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, nil, p.errorf("expected a member name")
		}
		key := p.node(yaml.ScalarNode, "!!str")
		key.Style = yaml.DoubleQuotedStyle
		k, err := p.str()
		if err != nil {
			return nil, nil, err
		}
		// The YAML parser rejects duplicate keys; so do we, leaving such
		// documents to kin-openapi's JSON fallback (last one wins).
		if p.duplicate(n.Content, k, &seen) {
			return nil, nil, p.errorf("duplicate member %q", k)
		}
		key.Value = k
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, nil, p.errorf("expected ':' after member name")
		}
		p.pos++
		p.skipSpace()
		var v *yaml.Node
		if lazy != nil && p.pos < len(p.data) && p.data[p.pos] == '{' && lazy(k) {
			dv := deferredValue{index: len(n.Content) + 1, key: k, at: p.mark(), depth: depth + 1}
			if err := p.skipValue(); err != nil {
				return nil, nil, err
			}
			dv.end = p.pos
			deferred = append(deferred, dv)
		} else if v, err = p.value(depth + 1); err != nil {
			return nil, nil, err
		}
		n.Content = append(n.Content, key, v)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, nil, p.errorf("unexpected end of input in object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return n, deferred, nil
		default:
			return nil, nil, p.errorf("expected ',' or '}' in object")
		}
	}
}

// duplicate reports whether key is already among the members of content.
func (p *jsonParser) duplicate(content []*yaml.Node, key string, seen *map[string]struct{}) bool {
	const scanMax = 16
	if len(content) < 2*scanMax {
		for i := 0; i < len(content); i += 2 {
			if content[i].Value == key {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]struct{}, len(content))
		for i := 0; i < len(content); i += 2 {
			(*seen)[content[i].Value] = struct{}{}
		}
	}
	if _, dup := (*seen)[key]; dup {
		return true
	}
	(*seen)[key] = struct{}{}
	return false
}

func (p *jsonParser) array(depth int) (*yaml.Node, error) {
	n := p.node(yaml.SequenceNode, "!!seq")
	n.Style = yaml.FlowStyle
	p.pos++ // [
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return n, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, v)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of input in array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return n, nil
		default:
			return nil, p.errorf("expected ',' or ']' in array")
		}
	}
}

// str reads a JSON string starting at the opening quote. jsonlex's scanner
// finds its end and checks its escapes; the strict reader adds UTF-8.
func (p *jsonParser) str() (string, error) {
	start := p.pos
	end, err := jsonlex.SkipString(p.data, start)
	p.pos = end
	if err != nil {
		return "", p.errorf("%v", err)
	}
	raw := p.data[start+1 : end-1]
	if !utf8.Valid(raw) {
		return "", p.errorf("invalid UTF-8 in string")
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), nil
	}
	var s string
	if err := json.Unmarshal(p.data[start:end], &s); err != nil {
		return "", p.errorf("%v", err)
	}
	return s, nil
}

// number reads a JSON number and tags it as the YAML resolver would tag the
// same plain scalar: !!int when it parses as a signed or unsigned 64-bit
// integer (except -0), !!float otherwise.
func (p *jsonParser) number() (*yaml.Node, error) {
	n := p.node(yaml.ScalarNode, "")
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		s := p.pos
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
		}
		return p.pos - s
	}
	intStart := p.pos
	nd := digits()
	if nd == 0 || nd > 1 && p.data[intStart] == '0' {
		return nil, p.errorf("malformed number")
	}
	integer := true
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		integer = false
		p.pos++
		if digits() == 0 {
			return nil, p.errorf("malformed number")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		integer = false
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errorf("malformed number")
		}
	}
	text := string(p.data[start:p.pos])
	n.Value = text
	if integer && text != "-0" { // the resolver reads -0 as the float -0.0
		if _, err := strconv.ParseInt(text, 10, 64); err == nil {
			n.Tag = "!!int"
			return n, nil
		}
		if _, err := strconv.ParseUint(text, 10, 64); err == nil {
			n.Tag = "!!int"
			return n, nil
		}
	}
	if _, err := strconv.ParseFloat(text, 64); err != nil {
		// Out of float64 range: the YAML resolver would read it as a string.
		// Rare enough to leave to the fallback.
		return nil, p.errorf("number %s out of range", text)
	}
	n.Tag = "!!float"
	return n, nil
}
