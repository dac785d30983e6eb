package openapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v4"
)

// LoadOptions bounds how a document and the files it refers to are read.
type LoadOptions struct {
	// Timeout bounds the whole load: the document and every file or URL its
	// $refs point to. Zero means 30s.
	Timeout time.Duration
	// MaxBytes caps each file or URL read. Zero means 64 MiB.
	MaxBytes int64
	// HTTPClient fetches http(s) locations. Nil means a client whose own
	// timeout is Timeout. The load's deadline applies either way. The load
	// uses a copy whose CheckRedirect stops after 10 redirects and applies
	// the origin rule below to every hop before calling the client's own
	// CheckRedirect, if any; the client itself is not changed.
	HTTPClient *http.Client
	// RefAllow lists origins (scheme://host[:port], see ParseOrigin) that a
	// document loaded from an http(s) URL may fetch from besides its own.
	// Nil means its own only.
	//
	// The origin rule, for a document whose location is an http(s) URL:
	// every request the load makes, for an external $ref or a redirect hop
	// of any fetch (the document's own included), must go to the origin of
	// that location as given (not where a redirect took it) or to an origin
	// in RefAllow; anything else fails the load with an *OriginError, before
	// the request is sent. Such a document may not refer to local files at
	// all. A redirect of the document itself to another origin is refused
	// too: the content would come from a host the operator did not name, so
	// it needs the same consent; to follow http to https, configure the
	// https URL or list its origin here. Relative refs resolve against the
	// location as given even when it redirected.
	//
	// A document loaded from a file (or from memory without an http(s)
	// location) is the operator's own: it may refer to local files and to
	// any URL, and RefAllow is not used (its entries must still parse).
	RefAllow []string
	// DeferValidation leaves kin-openapi's validation out of the load, so
	// that the caller can run it (Validate) beside other work that reads
	// the document. False means Warnings include its findings.
	DeferValidation bool
}

const (
	defaultTimeout  = 30 * time.Second
	defaultMaxBytes = 64 << 20
)

func (o LoadOptions) withDefaults() LoadOptions {
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = defaultMaxBytes
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: o.Timeout}
	}
	return o
}

// ErrTooLarge is wrapped by the error of a load that read a file or URL
// larger than LoadOptions.MaxBytes.
var ErrTooLarge = errors.New("larger than the size limit")

// StatusError is a document (or referenced file) URL answered with a
// status other than 2xx: a caller may retry a 5xx, not a 404.
type StatusError struct {
	URL        string
	StatusCode int
	Status     string // as the server sent it: "503 Service Unavailable"
}

func (e *StatusError) Error() string { return "GET " + e.URL + ": " + e.Status }

// LoadError is a document that could not be loaded.
type LoadError struct {
	// Location is the file path or URL that was being loaded.
	Location string
	// Err says what went wrong; it names the referenced file, the $ref or the
	// line at fault where kin-openapi or the parser tell.
	Err error
}

func (e *LoadError) Error() string {
	loc := e.Location
	if loc == "" {
		loc = "document"
	}
	return "openapi: load " + loc + ": " + e.Err.Error()
}

func (e *LoadError) Unwrap() error { return e.Err }

// Load reads the OpenAPI document at location, a file path or an http(s) URL,
// with every $ref resolved. See the package documentation for what fails and
// what only warns.
func Load(ctx context.Context, location string, opts LoadOptions) (*Document, error) {
	opts = opts.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	u, err := parseLocation(location)
	if err != nil {
		return nil, &LoadError{Location: location, Err: err}
	}
	r, err := newReader(ctx, u, opts)
	if err != nil {
		return nil, &LoadError{Location: location, Err: err}
	}
	data, err := r.read(nil, u)
	if err != nil {
		return nil, &LoadError{Location: location, Err: err}
	}
	return load(ctx, data, location, u, r, opts.DeferValidation)
}

// LoadData loads a document already in memory. location is where it came
// from: relative $refs resolve against it and messages name it. An empty
// location resolves relative $refs against the working directory.
func LoadData(ctx context.Context, data []byte, location string, opts LoadOptions) (*Document, error) {
	opts = opts.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	var u *url.URL
	if location != "" {
		var err error
		if u, err = parseLocation(location); err != nil {
			return nil, &LoadError{Location: location, Err: err}
		}
	}
	r, err := newReader(ctx, u, opts)
	if err != nil {
		return nil, &LoadError{Location: location, Err: err}
	}
	if u != nil {
		// A referenced file that points back at the root document gets the
		// bytes we were given, even when location does not exist on disk.
		r.cache[cacheKey(u)] = data
	}
	return load(ctx, data, location, u, r, opts.DeferValidation)
}

func load(ctx context.Context, data []byte, location string, u *url.URL, r *reader, deferValidation bool) (*Document, error) {
	fail := func(err error) (*Document, error) {
		return nil, &LoadError{Location: location, Err: err}
	}
	loader := &openapi3.Loader{
		Context:               ctx,
		IsExternalRefsAllowed: true,
		ReadFromURIFunc:       r.read,
	}

	// JSON documents take the fast reader; on any error it returns, the
	// document goes through kin-openapi's own decoding instead.
	var (
		node    *yaml.Node
		jsonErr error
	)
	if mayBeJSON(data) {
		var (
			t       *openapi3.T
			version string
		)
		t, version, node, jsonErr = readJSON(data)
		if t != nil {
			if err := loader.ResolveRefsIn(t, u); err != nil {
				return fail(withDeadline(ctx, err))
			}
			return finish(ctx, &Document{T: t, SourceVersion: version, Location: location}, deferValidation), nil
		}
	}
	field, version, err := sniffVersion(data, node)
	if err != nil {
		if jsonErr != nil {
			// It looked like JSON, so say where the JSON breaks rather
			// than what the YAML parser made of it.
			err = jsonErr
		}
		return fail(err)
	}

	doc := &Document{SourceVersion: version, Location: location}
	switch {
	case field == "swagger" && version == "2.0":
		doc.T, err = loadSwagger(ctx, data, node, u, r, loader)
	case field == "openapi" && isOpenAPI3(version):
		doc.T, err = loadOpenAPI3(data, node, u, loader)
	default:
		return fail(fmt.Errorf("unsupported %s version %q (want swagger 2.0 or openapi 3.0, 3.1, 3.2)", field, version))
	}
	if err != nil {
		return fail(withDeadline(ctx, err))
	}
	return finish(ctx, doc, deferValidation), nil
}

func isOpenAPI3(version string) bool {
	return strings.HasPrefix(version, "3.0") || strings.HasPrefix(version, "3.1") || strings.HasPrefix(version, "3.2")
}

// withDeadline adds the load's deadline to the error of a read it cut
// short: the deadline is the likelier story than whatever failed.
func withDeadline(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("%w (%w)", err, ctxErr)
	}
	return err
}

// finish adds the warnings of a loaded document.
func finish(ctx context.Context, doc *Document, deferValidation bool) *Document {
	if strings.HasPrefix(doc.SourceVersion, "3.2") {
		doc.Warnings = append(doc.Warnings, Warning{Location: "openapi", Message: "OpenAPI 3.2 is only partly supported; features newer than 3.1 may be ignored"})
	}
	if !deferValidation {
		doc.Warnings = append(doc.Warnings, validate(ctx, doc.T)...)
	}
	doc.Warnings = append(doc.Warnings, check(doc.T)...)
	doc.Warnings = append(doc.Warnings, checkNewerConstructs(doc.T, doc.SourceVersion)...)
	return doc
}

// readJSON reads a JSON document with the fast reader. An OpenAPI 3
// document comes back decoded, with its version; any other as its node
// tree, or with the error that stopped the reader. A document the split
// decode does not take is read whole, so that it meets exactly what it met
// before the split decode existed.
func readJSON(data []byte) (t *openapi3.T, version string, node *yaml.Node, err error) {
	if jdoc, err := scanJSON(data); err == nil {
		if field, v, ok := versionFromNode(jdoc.root); ok && field == "openapi" && isOpenAPI3(v) {
			if t, err := jdoc.decodeOpenAPI3(); err == nil {
				return t, v, nil, nil
			}
		}
		if node, err := jdoc.document(); err == nil {
			return nil, "", node, nil
		}
	}
	node, err = jsonNode(data) // says where the JSON breaks
	return nil, "", node, err
}

func loadOpenAPI3(data []byte, node *yaml.Node, u *url.URL, loader *openapi3.Loader) (*openapi3.T, error) {
	if node != nil {
		t := &openapi3.T{}
		if err := node.Decode(t); err == nil {
			if err := loader.ResolveRefsIn(t, u); err != nil {
				return nil, err
			}
			return t, nil
		}
		// Decoding errors are reported by the path below, in kin-openapi's words.
	}
	if u == nil {
		return loader.LoadFromData(data)
	}
	return loader.LoadFromDataWithPath(data, u)
}

// parseLocation turns a file path, file:// URL or http(s) URL into the URL
// form kin-openapi resolves relative references against. File paths become
// absolute so that a reference back to the root document is recognised.
func parseLocation(location string) (*url.URL, error) {
	if location == "" {
		return nil, errors.New("empty location")
	}
	lower := strings.ToLower(location)
	switch {
	case strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://"):
		u, err := url.Parse(location)
		if err != nil {
			return nil, err
		}
		if u.Host == "" {
			return nil, fmt.Errorf("URL %q has no host", location)
		}
		u.Fragment = ""
		return u, nil
	case strings.HasPrefix(lower, "file://"):
		u, err := url.Parse(location)
		if err != nil {
			return nil, err
		}
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("file URL %q names a remote host", location)
		}
		location = u.Path
	case strings.Contains(location, "://"):
		return nil, fmt.Errorf("unsupported URL scheme in %q (want a file path or an http(s) URL)", location)
	}
	abs, err := filepath.Abs(location)
	if err != nil {
		return nil, err
	}
	return &url.URL{Path: filepath.ToSlash(abs)}, nil
}

func isRemote(u *url.URL) bool {
	return u != nil && (u.Scheme == "http" || u.Scheme == "https")
}

func cacheKey(u *url.URL) string {
	c := *u
	c.Fragment = ""
	c.RawFragment = ""
	return c.String()
}

// reader is the loader's ReadFromURIFunc: it reads files and http(s) URLs
// within the load's deadline and size cap, once each per load. It owns the
// access policy (kin-openapi does not check IsExternalRefsAllowed once a
// ReadFromURIFunc is set): a document that came over http(s) may not read
// local files, and reads URLs only under the origin rule of
// LoadOptions.RefAllow.
type reader struct {
	ctx      context.Context
	client   *http.Client
	maxBytes int64
	// rootOrigin is the origin of a document that came over http(s), ""
	// for a local one.
	rootOrigin string
	allow      map[string]bool   // further origins rootOrigin's document may read
	cache      map[string][]byte // the loader calls from one goroutine
}

func newReader(ctx context.Context, root *url.URL, opts LoadOptions) (*reader, error) {
	allow, err := parseOrigins(opts.RefAllow)
	if err != nil {
		return nil, err
	}
	r := &reader{
		ctx:      ctx,
		maxBytes: opts.MaxBytes,
		allow:    allow,
		cache:    make(map[string][]byte),
	}
	if isRemote(root) {
		r.rootOrigin = origin(root)
	}
	r.client = r.guardRedirects(opts.HTTPClient)
	return r, nil
}

func (r *reader) read(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	key := cacheKey(u)
	if data, ok := r.cache[key]; ok {
		return data, nil
	}
	var (
		data []byte
		err  error
	)
	switch {
	case isRemote(u):
		if err := r.checkOrigin(u, nil); err != nil {
			return nil, err
		}
		data, err = r.fetch(u)
	case (u.Scheme == "" || u.Scheme == "file") && (u.Host == "" || u.Host == "localhost") && u.Path != "":
		if r.rootOrigin != "" {
			return nil, fmt.Errorf("%s: a document fetched over http(s) may not refer to local files", u.Path)
		}
		data, err = r.readFile(filepath.FromSlash(u.Path))
	default:
		return nil, fmt.Errorf("%s: unsupported reference (want a relative or absolute file path or an http(s) URL)", u)
	}
	if err != nil {
		return nil, err
	}
	r.cache[key] = data
	return data, nil
}

func (r *reader) readFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() <= r.maxBytes {
		// Read in one go: io.ReadAll would grow its buffer a dozen times
		// on a large document and leave the copies to the collector.
		data := make([]byte, fi.Size()+1)
		n, err := io.ReadFull(f, data)
		switch {
		case err == io.ErrUnexpectedEOF || err == io.EOF:
			return data[:n], nil
		case err != nil:
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		// The file grew since Stat: read on, within the cap.
		rest, err := io.ReadAll(io.LimitReader(f, r.maxBytes+1-int64(n)))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		if data = append(data, rest...); int64(len(data)) > r.maxBytes {
			return nil, fmt.Errorf("read %s: %w (%d bytes)", name, ErrTooLarge, r.maxBytes)
		}
		return data, nil
	}
	return readCapped(f, r.maxBytes, name)
}

// Validators are a fetched document's HTTP validators, for a conditional
// re-read.
type Validators struct{ ETag, LastModified string }

// Read returns the bytes of the document at location, a file path or an
// http(s) URL, as Load reads them: within opts' timeout and size cap, and
// for a URL under the origin rule of LoadOptions.RefAllow. For a URL, since
// (when not zero) makes the request conditional: an unchanged document is
// nil data with no error; got are the answer's validators. LoadData with
// the bytes and location loads what Load would.
func Read(ctx context.Context, location string, opts LoadOptions, since Validators) (data []byte, got Validators, err error) {
	opts = opts.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	u, err := parseLocation(location)
	if err != nil {
		return nil, got, &LoadError{Location: location, Err: err}
	}
	r, err := newReader(ctx, u, opts)
	if err != nil {
		return nil, got, &LoadError{Location: location, Err: err}
	}
	if !isRemote(u) {
		data, err = r.read(nil, u)
	} else {
		data, got, err = r.fetchSince(u, since)
	}
	if err != nil {
		return nil, got, &LoadError{Location: location, Err: err}
	}
	return data, got, nil
}

func (r *reader) fetch(u *url.URL) ([]byte, error) {
	data, _, err := r.fetchSince(u, Validators{})
	return data, err
}

// fetchSince is fetch, conditional on since when it has validators (a
// 304 is nil data), returning the answer's validators.
func (r *reader) fetchSince(u *url.URL, since Validators) ([]byte, Validators, error) {
	var got Validators
	c := *u
	c.Fragment, c.RawFragment = "", ""
	req, err := http.NewRequestWithContext(r.ctx, http.MethodGet, c.String(), nil)
	if err != nil {
		return nil, got, err
	}
	req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.5")
	if since.ETag != "" {
		req.Header.Set("If-None-Match", since.ETag)
	}
	if since.LastModified != "" {
		req.Header.Set("If-Modified-Since", since.LastModified)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		var oe *OriginError
		if errors.As(err, &oe) {
			return nil, got, oe // it names both URLs; "Get <url>: " would repeat one
		}
		return nil, got, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified && since != (Validators{}) {
		return nil, since, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Drain a little so the connection can be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, got, &StatusError{URL: c.String(), StatusCode: resp.StatusCode, Status: resp.Status}
	}
	if resp.ContentLength > r.maxBytes {
		return nil, got, fmt.Errorf("GET %s: %d bytes: %w (%d bytes)", c.String(), resp.ContentLength, ErrTooLarge, r.maxBytes)
	}
	got = Validators{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}
	data, err := readCapped(resp.Body, r.maxBytes, c.String())
	return data, got, err
}

func readCapped(src io.Reader, limit int64, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(src, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("read %s: %w (%d bytes)", name, ErrTooLarge, limit)
	}
	return data, nil
}

// mayBeJSON reports whether data starts, past whitespace and a UTF-8 byte
// order mark, like a JSON object.
func mayBeJSON(data []byte) bool {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && data[0] == '{'
}
