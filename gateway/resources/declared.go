package resources

import (
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/yosida95/uritemplate/v3"
)

// Declared is a resource from the configuration (YAML resources: entries;
// the command reads file sources into Text/Blob).
type Declared struct {
	// URI is a fixed resource's URI; or
	URI string
	// URITemplate is an RFC 6570 template of levels 1 and 2: {name}
	// matches one path segment (never a value holding '/' or '\', encoded
	// or not, nor "." or ".."), {+name} and {#name} any reserved
	// characters, slashes included. It must begin with a literal scheme.
	URITemplate string
	// Name is the resource's name; empty means the URI or template.
	Name, Title, Description string
	// MIMEType empty means text/plain for Text, application/octet-stream
	// for Blob.
	MIMEType string
	// Text is a Go text/template over the template's variables ({{.id}}:
	// the decoded value the URI matched, inserted as is: no escaping for
	// JSON or anything else); a fixed resource's is run once, by New, with
	// no variables. Naming a variable the template lacks fails: in New for
	// a fixed resource, as an internal error on read for a template.
	Text *string
	// Blob is bytes, sent as a base64 blob: the same for every URI a
	// template matches.
	Blob []byte
	// Values are completion candidates per template variable.
	Values map[string][]string
	// Operation, instead of Text or Blob, names a tool whose live result
	// is the contents (its structuredContent as JSON, else its first
	// content), called with Arguments and, for a template, each variable
	// as the argument of its name (a string, or the number or boolean the
	// tool's parameter takes). Subscribers' copies are polled for changes.
	Operation string
	Arguments map[string]any
}

// body is what a read answers with: text or a base64 blob.
type body struct {
	// err, when set, is why the body could not be made: the gateway's
	// fault, answered as an internal error.
	err      error
	mimeType string
	text     string
	blob     string // base64
	isBlob   bool
	// From the backend, for change polling: its validators, and whether
	// it answered 304 to a conditional read (then there are no contents).
	etag, lastModified string
	notModified        bool
}

// uriTemplate is a compiled resource template, declared or built in.
type uriTemplate struct {
	info resourceTemplate
	tmpl *uritemplate.Template
	// re is tmpl as a regular expression, one group per expression (see
	// match).
	re *regexp.Regexp
	// prefix is the literal text before the first expression: a cheap
	// test before the matcher runs.
	prefix string
	scheme string
	vars   []string
	// segment holds the variables of simple expansion ({name}): each
	// matches one path segment.
	segment map[string]bool
	values  map[string][]string
	// source makes the body of a matched URI; a nil body is "not found".
	// An error that is not an *mcp.Error is the gateway's fault, never
	// shown to the client.
	source
	// exists, when set, says whether matched variables name a resource
	// (without reading it); nil means any match does.
	exists func(s *state, vars map[string]string) bool
}

// known reports whether vars, matched by t, name a resource.
func (t *uriTemplate) known(s *state, vars map[string]string) bool {
	return t.exists == nil || t.exists(s, vars)
}

// compiled is the declared entries, checked and ready to serve.
type compiled struct {
	resources []resource
	bodies    map[string]*body   // by URI
	dynamic   map[string]*source // operation-backed, by URI
	templates []*uriTemplate
}

// reservedSchemes are the gateway's own (gateway:) and those a client
// would take for the backend's or the web's (http:, https:).
var reservedSchemes = []string{"gateway", "http", "https"}

func compile(decl []Declared) (*compiled, error) {
	c := &compiled{bodies: make(map[string]*body), dynamic: make(map[string]*source)}
	var templateEntry []int // the entry index of each template
	for i, d := range decl {
		var err error
		if d.URI != "" && d.URITemplate == "" {
			err = c.addFixed(d)
		} else if d.URITemplate != "" && d.URI == "" {
			var dup int
			if dup, err = c.addTemplate(d); dup >= 0 {
				err = fmt.Errorf("entry %d has the same template (up to variable names)", templateEntry[dup])
			}
			templateEntry = append(templateEntry, i)
		} else {
			err = errors.New("exactly one of uri and uriTemplate is needed")
		}
		if err != nil {
			return nil, fmt.Errorf("resources: entry %d (%q): %w", i, cmp.Or(d.URI, d.URITemplate), err)
		}
	}
	return c, nil
}

// newBody checks d's text or blob: the body, with its text template
// when it has one.
func newBody(d Declared) (*body, *template.Template, error) {
	if (d.Text == nil) == (d.Blob == nil) {
		return nil, nil, errors.New("exactly one of text and blob is needed")
	}
	b := &body{mimeType: d.MIMEType}
	if d.Blob != nil {
		b.isBlob = true
		b.blob = base64.StdEncoding.EncodeToString(d.Blob)
		b.mimeType = cmp.Or(b.mimeType, "application/octet-stream")
		return b, nil, nil
	}
	b.mimeType = cmp.Or(b.mimeType, "text/plain")
	// missingkey=error: {{.idd}} for {{.id}} fails instead of reading
	// "<no value>".
	text, err := template.New(cmp.Or(d.URI, d.URITemplate)).Option("missingkey=error").Parse(*d.Text)
	if err != nil {
		return nil, nil, fmt.Errorf("text: %w", err)
	}
	return b, text, nil
}

// addFixed adds the fixed resource d, its text made once, here.
func (c *compiled) addFixed(d Declared) error {
	u, err := url.Parse(d.URI)
	if err != nil || u.Scheme == "" {
		return errors.New("uri must be an absolute URI with a scheme")
	}
	if isReserved(u.Scheme) {
		return fmt.Errorf("the scheme %s: is reserved", u.Scheme)
	}
	if len(d.Values) > 0 {
		return errors.New("values are for template variables, and a fixed resource has none")
	}
	if _, dup := c.bodies[d.URI]; dup {
		return errors.New("another entry has the same uri")
	}
	if _, dup := c.dynamic[d.URI]; dup {
		return errors.New("another entry has the same uri")
	}
	if d.Operation != "" {
		src, mime, err := operationSource(d)
		if err != nil {
			return err
		}
		c.dynamic[d.URI] = src
		c.resources = append(c.resources, resource{URI: d.URI, Name: cmp.Or(d.Name, d.URI),
			Title: d.Title, Description: d.Description, MIMEType: mime, tool: d.Operation})
		return nil
	}
	b, text, err := newBody(d)
	if err != nil {
		return err
	}
	if text != nil {
		var sb strings.Builder
		if err := text.Execute(&sb, map[string]string{}); err != nil {
			return fmt.Errorf("text: %w", err)
		}
		b.text = sb.String()
	}
	c.bodies[d.URI] = b
	c.resources = append(c.resources, resource{URI: d.URI, Name: cmp.Or(d.Name, d.URI),
		Title: d.Title, Description: d.Description, MIMEType: b.mimeType})
	return nil
}

// addTemplate adds the template resource d. dup is the index of an
// earlier template equal to it up to variable names (then nothing is
// added), or -1.
func (c *compiled) addTemplate(d Declared) (dup int, err error) {
	t, err := parseTemplate(d.URITemplate)
	if err != nil {
		return -1, err
	}
	if isReserved(t.scheme) {
		return -1, fmt.Errorf("the scheme %s: is reserved", t.scheme)
	}
	for j, prev := range c.templates {
		if uritemplate.Equals(t.tmpl, prev.tmpl, 0) {
			return j, nil
		}
	}
	for name := range d.Values {
		if !slices.Contains(t.vars, name) {
			return -1, fmt.Errorf("values for %q, which is not a variable of the template", name)
		}
	}
	mime := d.MIMEType
	if d.Operation != "" {
		src, m, err := operationSource(d)
		if err != nil {
			return -1, err
		}
		t.source, mime = *src, m
	} else {
		b, text, err := newBody(d)
		if err != nil {
			return -1, err
		}
		mime = b.mimeType
		t.render = textRender(b, text, d.URITemplate)
	}
	t.info = resourceTemplate{URITemplate: d.URITemplate, Name: cmp.Or(d.Name, d.URITemplate),
		Title: d.Title, Description: d.Description, MIMEType: mime, tool: t.tool}
	t.values = maps.Clone(d.Values) // variableValues hands out copies
	c.templates = append(c.templates, t)
	return -1, nil
}

// textRender makes a declared template's body: b as it is, or text run
// over the variables.
func textRender(b *body, text *template.Template, name string) func(*reading, map[string]string) (*body, error) {
	if text == nil {
		return func(*reading, map[string]string) (*body, error) { return b, nil }
	}
	return func(_ *reading, vars map[string]string) (*body, error) {
		var sb strings.Builder
		if err := text.Execute(&sb, vars); err != nil {
			return nil, fmt.Errorf("resources: render %s: %w", name, err)
		}
		return &body{mimeType: b.mimeType, text: sb.String()}, nil
	}
}

// parseTemplate checks and compiles a template: it parses, begins with
// a literal scheme, uses levels 1 and 2 only, and names each variable
// once.
func parseTemplate(raw string) (*uriTemplate, error) {
	tmpl, err := uritemplate.New(raw)
	if err != nil {
		return nil, fmt.Errorf("uriTemplate: %v", err)
	}
	t := &uriTemplate{tmpl: tmpl, segment: make(map[string]bool)}
	t.prefix, _, _ = strings.Cut(raw, "{")
	scheme, _, ok := strings.Cut(t.prefix, ":")
	if !ok || !validScheme(scheme) {
		return nil, fmt.Errorf("uriTemplate must begin with a literal scheme")
	}
	t.scheme = scheme
	// The library parsed it, so braces pair up and literals hold none.
	for rest := raw; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest, '}')
		expr := rest[i+1 : j]
		rest = rest[j+1:]
		op := expr[0]
		switch op {
		case '+', '#':
			expr = expr[1:]
		case '.', '/', ';', '?', '&', '=', ',', '!', '@', '|':
			return nil, fmt.Errorf("uriTemplate: {%c...} is a level 3 operator; only {name}, {+name} and {#name} are served", op)
		}
		if strings.ContainsAny(expr, ",:*") {
			return nil, fmt.Errorf("uriTemplate: {%s} needs level 3 or 4 (several variables, a prefix or explode); only {name}, {+name} and {#name} are served", expr)
		}
		if slices.Contains(t.vars, expr) {
			return nil, fmt.Errorf("uriTemplate: variable %q appears twice", expr)
		}
		t.vars = append(t.vars, expr)
		if op != '+' && op != '#' {
			t.segment[expr] = true
		}
	}
	// With one variable per expression, the library's expression has one
	// group per variable, in order.
	if t.re = tmpl.Regexp(); t.re.NumSubexp() != len(t.vars) {
		return nil, fmt.Errorf("uriTemplate: %d groups for %d variables", t.re.NumSubexp(), len(t.vars))
	}
	return t, nil
}

// match returns the decoded variables of uri when t matches it.
//
// It runs the library's regular expression (RE2: linear time) rather
// than its Template.Match, a backtracking-free but allocating NFA that
// took 24 ms for an 8 KiB URI against test://t/{id}/d and 150 ms against a
// template of four expressions: per read and per template, that is a
// cheap way to burn the gateway's CPU. FuzzMatchAgreesWithLibrary checks
// the two agree.
func (t *uriTemplate) match(uri string) (map[string]string, bool) {
	if !strings.HasPrefix(uri, t.prefix) {
		return nil, false
	}
	sub := t.re.FindStringSubmatchIndex(uri)
	if sub == nil {
		return nil, false
	}
	vars := make(map[string]string, len(t.vars))
	for k, name := range t.vars {
		lo, hi := sub[2*k+2], sub[2*k+3]
		if lo < 0 {
			return nil, false // the expression matched nothing
		}
		// The expression allows only whole %XX triplets, so this cannot
		// fail; '+' stays '+', as in a path.
		val, err := url.PathUnescape(uri[lo:hi])
		if err != nil || val == "" || t.segment[name] && !oneSegment(val) {
			return nil, false
		}
		vars[name] = val
	}
	return vars, true
}

// oneSegment reports whether a decoded {name} value stays one path
// segment: no separator ('/', or '\' which some resolvers take for one),
// not a dot-segment, and neither after one more decoding (a
// double-encoded %252F arrives here as %2F).
func oneSegment(v string) bool {
	for _, s := range []string{v, unescapeOnce(v)} {
		if strings.ContainsAny(s, `/\`) || s == "." || s == ".." {
			return false
		}
	}
	return true
}

func unescapeOnce(v string) string {
	if !strings.Contains(v, "%") {
		return v
	}
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}

func isReserved(scheme string) bool {
	return slices.ContainsFunc(reservedSchemes, func(r string) bool { return strings.EqualFold(r, scheme) })
}

// validScheme is RFC 3986's scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
func validScheme(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range []byte(s) {
		alpha := 'a' <= c|0x20 && c|0x20 <= 'z'
		if !alpha && (i == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// variableValues are t's candidates for variable; ok is false when t has
// no such variable.
func (t *uriTemplate) variableValues(variable string) ([]string, bool) {
	if !slices.Contains(t.vars, variable) {
		return nil, false
	}
	return slices.Clone(t.values[variable]), true
}
