package openapi

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v4"
)

// Swagger 2.0 documents are converted with openapi2conv, which resolves $refs
// only after converting, with the OpenAPI 3 loader. That is fine for refs
// within the document, but a parameter or response in another file is then
// read as an OpenAPI 3 object, which it is not (a 2.0 query parameter has
// "type" where 3.0 has "schema"), and silently loses its type. So external
// references are bundled into the document first: every schema, parameter
// and response another file holds is copied under definitions, parameters or
// responses and referred to from there; path items are copied in place.

func loadSwagger(ctx context.Context, data []byte, node *yaml.Node, u *url.URL, r *reader, loader *openapi3.Loader) (*openapi3.T, error) {
	if node == nil {
		var root yaml.Node
		if err := yaml.Unmarshal(data, &root); err != nil {
			return nil, fmt.Errorf("yaml: %w", err)
		}
		node = &root
	}
	b := newBundler(ctx, node, u, r)
	changed, err := b.bundle()
	if err != nil {
		return nil, err
	}
	if changed {
		if data, err = yaml.Marshal(node); err != nil {
			return nil, fmt.Errorf("re-encode bundled document: %w", err)
		}
	}
	var doc2 openapi2.T
	if err := openapi2.UnmarshalFromData(data, &doc2); err != nil {
		return nil, err
	}
	doc3, err := openapi2conv.ToV3WithLoader(&doc2, loader, u)
	if err != nil {
		return nil, err
	}
	requireFormBodies(doc3)
	return doc3, nil
}

// requireFormBodies marks a request body converted from formData parameters
// required when one of the parameters was: openapi2conv moves their
// required flags into the body schema but leaves the body itself optional,
// which would let a client leave out a required file.
func requireFormBodies(t *openapi3.T) {
	for _, op := range Operations(t) {
		rb := op.Operation.RequestBody
		if rb == nil || rb.Ref != "" || rb.Value == nil || rb.Value.Required {
			continue
		}
		for mt, media := range rb.Value.Content {
			class := ClassifyMediaType(mt)
			if (class == MediaForm || class == MediaMultipart) && media != nil && media.Schema != nil &&
				media.Schema.Value != nil && len(media.Schema.Value.Required) > 0 {
				rb.Value.Required = true
			}
		}
	}
}

type refKind int

const (
	kindSchema refKind = iota
	kindParameter
	kindResponse
	kindPathItem
)

// section is where a hoisted object of each kind goes in the root document.
var section = map[refKind]string{kindSchema: "definitions", kindParameter: "parameters", kindResponse: "responses"}

type bundler struct {
	ctx     context.Context
	root    *yaml.Node // the root document's top-level mapping
	rootURL *url.URL
	r       *reader
	docs    map[string]*yaml.Node // external documents by URL, top-level node
	hoisted map[string]string     // absolute ref → local ref (#/definitions/Name)
	used    map[string]map[string]bool
	changed bool
	inlined int // path items copied in place
}

// maxInlinedPathItems stops a path item that refers to itself.
const maxInlinedPathItems = 10000

func newBundler(ctx context.Context, doc *yaml.Node, u *url.URL, r *reader) *bundler {
	root := doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	return &bundler{
		ctx: ctx, root: root, rootURL: u, r: r,
		docs:    map[string]*yaml.Node{},
		hoisted: map[string]string{},
		used:    map[string]map[string]bool{},
	}
}

func (b *bundler) bundle() (bool, error) {
	if b.root.Kind != yaml.MappingNode {
		return false, fmt.Errorf("top level is not a mapping")
	}
	for _, sec := range []string{"definitions", "parameters", "responses"} {
		names := map[string]bool{}
		if m := mappingValue(b.root, sec); m != nil && m.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(m.Content); i += 2 {
				names[m.Content[i].Value] = true
			}
		}
		b.used[sec] = names
	}
	// Snapshot the members: hoisting appends to definitions and friends,
	// and what it appends is walked when it is hoisted.
	members := append([]*yaml.Node(nil), b.root.Content...)
	for i := 0; i+1 < len(members); i += 2 {
		key, val := members[i].Value, members[i+1]
		var err error
		switch key {
		case "paths":
			err = b.eachValue(val, func(v *yaml.Node) error { return b.walk(v, b.rootURL, kindPathItem) })
		case "definitions":
			err = b.eachValue(val, func(v *yaml.Node) error { return b.walk(v, b.rootURL, kindSchema) })
		case "parameters":
			err = b.eachValue(val, func(v *yaml.Node) error { return b.walk(v, b.rootURL, kindParameter) })
		case "responses":
			err = b.eachValue(val, func(v *yaml.Node) error { return b.walk(v, b.rootURL, kindResponse) })
		}
		if err != nil {
			return false, err
		}
	}
	return b.changed, nil
}

func (b *bundler) eachValue(m *yaml.Node, fn func(*yaml.Node) error) error {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if strings.HasPrefix(m.Content[i].Value, "x-") {
			continue
		}
		if err := fn(m.Content[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// walk rewrites the external references in n, an object of the given kind
// read from the document at base.
func (b *bundler) walk(n *yaml.Node, base *url.URL, kind refKind) error {
	if err := b.ctx.Err(); err != nil {
		return err
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	if ref := mappingValue(n, "$ref"); ref != nil && ref.Kind == yaml.ScalarNode {
		return b.ref(n, ref, base, kind)
	}
	switch kind {
	case kindPathItem:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i].Value, n.Content[i+1]
			switch {
			case key == "parameters":
				if err := b.eachItem(val, base, kindParameter); err != nil {
					return err
				}
			case strings.HasPrefix(key, "x-"):
			default: // an operation
				if val.Kind != yaml.MappingNode {
					continue
				}
				if p := mappingValue(val, "parameters"); p != nil {
					if err := b.eachItem(p, base, kindParameter); err != nil {
						return err
					}
				}
				if rs := mappingValue(val, "responses"); rs != nil {
					if err := b.eachValue(rs, func(v *yaml.Node) error { return b.walk(v, base, kindResponse) }); err != nil {
						return err
					}
				}
			}
		}
		return nil
	case kindParameter, kindResponse:
		if s := mappingValue(n, "schema"); s != nil {
			return b.walk(s, base, kindSchema)
		}
		return nil
	}
	// A schema: its subschemas sit under these keywords.
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i].Value, n.Content[i+1]
		switch key {
		case "items", "additionalProperties", "not":
			if err := b.walk(val, base, kindSchema); err != nil {
				return err
			}
		case "allOf", "anyOf", "oneOf":
			if err := b.eachItem(val, base, kindSchema); err != nil {
				return err
			}
		case "properties", "patternProperties":
			if err := b.eachValue(val, func(v *yaml.Node) error { return b.walk(v, base, kindSchema) }); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *bundler) eachItem(seq *yaml.Node, base *url.URL, kind refKind) error {
	if seq.Kind != yaml.SequenceNode {
		return b.walk(seq, base, kind) // items: {schema}
	}
	for _, item := range seq.Content {
		if err := b.walk(item, base, kind); err != nil {
			return err
		}
	}
	return nil
}

// ref handles a {$ref: ...} object found in the document at base.
func (b *bundler) ref(n, ref *yaml.Node, base *url.URL, kind refKind) error {
	if strings.HasPrefix(ref.Value, "#") && sameDoc(base, b.rootURL) {
		return nil // internal to the root document: kin-openapi resolves it
	}
	target, err := resolveRef(base, ref.Value)
	if err != nil {
		return fmt.Errorf("$ref %q at line %d: %w", ref.Value, ref.Line, err)
	}
	if sameDoc(target, b.rootURL) {
		// A file referring back into the root document.
		ref.Value = "#" + target.Fragment
		b.changed = true
		return nil
	}
	key := target.String()
	if local, ok := b.hoisted[key]; ok && kind != kindPathItem {
		ref.Value = local
		b.changed = true
		return nil
	}
	obj, err := b.lookup(target)
	if err != nil {
		return fmt.Errorf("$ref %q at line %d of %s: %w", ref.Value, ref.Line, displayURL(base), err)
	}
	obj = deepCopy(obj)
	b.changed = true
	docURL := withoutFragment(target)

	if kind == kindPathItem {
		// Path items cannot be referred to from definitions: copy in place.
		if b.inlined++; b.inlined > maxInlinedPathItems {
			return fmt.Errorf("$ref %q in %s: more than %d path item references (a cycle?)", ref.Value, displayURL(base), maxInlinedPathItems)
		}
		*n = *obj
		return b.walk(n, docURL, kind)
	}
	sec := section[kind]
	name := b.freeName(sec, refName(target))
	local := "#/" + sec + "/" + escapePointer(name)
	b.hoisted[key] = local
	ref.Value = local
	m := mappingValue(b.root, sec)
	if m == nil {
		m = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		b.root.Content = append(b.root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: sec}, m)
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name}, obj)
	return b.walk(obj, docURL, kind)
}

func (b *bundler) freeName(sec, want string) string {
	names := b.used[sec]
	name := want
	for i := 2; names[name]; i++ {
		name = want + "_" + strconv.Itoa(i)
	}
	names[name] = true
	return name
}

// lookup returns the node a resolved reference points at.
func (b *bundler) lookup(target *url.URL) (*yaml.Node, error) {
	docURL := withoutFragment(target)
	key := docURL.String()
	doc, ok := b.docs[key]
	if !ok {
		data, err := b.r.read(nil, docURL)
		if err != nil {
			return nil, err
		}
		var root yaml.Node
		if err := yaml.Unmarshal(data, &root); err != nil {
			return nil, fmt.Errorf("%s: %w", displayURL(docURL), err)
		}
		doc = &root
		if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
			doc = doc.Content[0]
		}
		b.docs[key] = doc
	}
	n := doc
	if target.Fragment == "" || target.Fragment == "/" {
		return n, nil
	}
	if !strings.HasPrefix(target.Fragment, "/") {
		return nil, fmt.Errorf("fragment %q is not a JSON pointer", target.Fragment)
	}
	for _, tok := range strings.Split(target.Fragment[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		n = resolveAlias(n)
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			next = mappingValue(n, tok)
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
			}
		}
		if next == nil {
			return nil, fmt.Errorf("%s has nothing at %q", displayURL(docURL), target.Fragment)
		}
		n = next
	}
	return resolveAlias(n), nil
}

func resolveRef(base *url.URL, ref string) (*url.URL, error) {
	r, err := url.Parse(ref)
	if err != nil {
		return nil, err
	}
	if r.Scheme != "" || r.Host != "" {
		return r, nil
	}
	if base == nil {
		base = &url.URL{}
	}
	if r.Path == "" {
		t := *base
		t.Fragment = r.Fragment
		return &t, nil
	}
	t := *base
	t.Fragment = r.Fragment
	t.RawFragment = ""
	if path.IsAbs(r.Path) {
		t.Path = r.Path
	} else {
		t.Path = path.Join(path.Dir(base.Path), r.Path)
	}
	return &t, nil
}

func sameDoc(a, b *url.URL) bool {
	if a == nil || b == nil {
		return a == b || (a == nil && b.Path == "") || (b == nil && a.Path == "")
	}
	return withoutFragment(a).String() == withoutFragment(b).String()
}

func withoutFragment(u *url.URL) *url.URL {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	return &c
}

func displayURL(u *url.URL) string {
	if u == nil {
		return "document"
	}
	if isRemote(u) {
		return withoutFragment(u).String()
	}
	return u.Path
}

// refName names a hoisted object after the last token of the reference's
// fragment, or its file name without extension.
func refName(target *url.URL) string {
	if f := strings.TrimRight(target.Fragment, "/"); f != "" {
		tok := f[strings.LastIndexByte(f, '/')+1:]
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if tok != "" {
			return tok
		}
	}
	base := path.Base(target.Path)
	if ext := path.Ext(base); ext != "" && ext != base {
		base = strings.TrimSuffix(base, ext)
	}
	if base == "" || base == "." || base == "/" {
		return "external"
	}
	return base
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func mappingValue(m *yaml.Node, key string) *yaml.Node {
	m = resolveAlias(m)
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return resolveAlias(m.Content[i+1])
		}
	}
	return nil
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// deepCopy copies n, expanding aliases, so that rewriting a hoisted copy's
// references leaves the source document as it was.
func deepCopy(n *yaml.Node) *yaml.Node {
	return copyNode(n, 0)
}

func copyNode(n *yaml.Node, depth int) *yaml.Node {
	n = resolveAlias(n)
	c := *n
	c.Anchor = ""
	if depth > maxJSONDepth {
		c.Content = nil
		return &c
	}
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, child := range n.Content {
			c.Content[i] = copyNode(child, depth+1)
		}
	}
	return &c
}
