package resources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/gateway/mcp/mcptest"
	"github.com/mcp-gateway/mcp-gateway/openapi"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// shopDoc has GET operations marked x-mcp-resource: a fixed one, a
// template with an integer enum parameter, one whose uri, mimeType and
// pollInterval are explicit, and two that only an admin may use.
const shopDoc = `openapi: 3.0.3
info: {title: Shop, version: "1"}
paths:
  /status:
    get:
      operationId: getStatus
      summary: Service status
      x-mcp-resource: true
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object}}}}
  /items/{id}:
    get:
      operationId: getItem
      summary: One item
      x-mcp-resource: true
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer, enum: [7, 8, 9]}}
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object}}}}
  /reports/daily:
    get:
      operationId: dailyReport
      x-mcp-resource: {uri: "reports://daily", mimeType: text/csv, pollInterval: 30s, title: Daily report}
      responses:
        "200": {description: ok, content: {text/csv: {schema: {type: string}}}}
  /secret:
    get:
      operationId: getSecret
      x-mcp-resource: true
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object}}}}
  /secrets/{name}:
    get:
      operationId: getSecretByName
      x-mcp-resource: true
      parameters:
        - {name: name, in: path, required: true, schema: {type: string}}
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object}}}}
`

// backend fakes Deps: it records each Fetch and CallTool and answers
// with what the test set.
type backend struct {
	fetched  *call.Fetched // nil: {"ok":true} as application/json
	fetchErr error
	fetches  []fetchCall
	result   *mcp.CallToolResult // nil: a text result
	callErr  error
	calls    []toolCall
	// adminOnly are the operations only the subject "admin" may use.
	adminOnly map[string]bool
	permits   int // Permits calls
}

type fetchCall struct {
	name, args string
	cond       call.Conditional
	asCaller   bool // false: the gateway's own poll (r nil)
}

type toolCall struct{ name, args string }

func (b *backend) deps() Deps {
	return Deps{Fetch: b.fetch, CallTool: b.callTool, Permits: b.permit}
}

func (b *backend) fetch(r *mcp.Request, name string, args json.RawMessage, cond call.Conditional) (*call.Fetched, error) {
	b.fetches = append(b.fetches, fetchCall{name: name, args: string(args), cond: cond, asCaller: r != nil})
	if b.fetchErr != nil {
		return nil, b.fetchErr
	}
	if b.fetched != nil {
		return b.fetched, nil
	}
	return &call.Fetched{Status: 200, MIMEType: "application/json", Body: []byte(`{"ok":true}`)}, nil
}

func (b *backend) callTool(r *mcp.Request, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	if r == nil {
		args = append(json.RawMessage("poll "), args...)
	}
	b.calls = append(b.calls, toolCall{name: name, args: string(args)})
	if b.callErr != nil {
		return nil, b.callErr
	}
	if b.result != nil {
		return b.result, nil
	}
	return mcp.TextResult("from " + name), nil
}

func (b *backend) permit(r *mcp.Request, name string) bool {
	b.permits++
	return !b.adminOnly[name] || r.Principal != nil && r.Principal.Subject == "admin"
}

// shop is the feature serving shopDoc's resources and decl, on a table.
func shop(t *testing.T, decl ...Declared) (*Feature, mcptest.Table, *backend) {
	t.Helper()
	doc, err := openapi.LoadData(context.Background(), []byte(shopDoc), "", openapi.LoadOptions{})
	require.NoError(t, err)
	set, err := toolgen.Generate(doc, toolgen.Options{})
	require.NoError(t, err)
	require.Empty(t, set.Warnings())
	b := &backend{adminOnly: map[string]bool{"getSecret": true, "getSecretByName": true}}
	f, err := New(Config{Declared: decl}, b.deps())
	require.NoError(t, err)
	tab := mcptest.Table{}
	f.Register(tab)
	f.SetCatalog(Catalog{Doc: doc, Set: set, ServerName: "gw"})
	return f, tab, b
}

func admin(r *mcp.Request) *mcp.Request {
	r.Principal = &mcp.Principal{Subject: "admin"}
	return r
}

// readURI is resources/read of uri in era, as the wire carries it.
func readURI(t *testing.T, tab mcptest.Table, era mcp.Era, uri string) (string, error) {
	t.Helper()
	return callMethod(t, tab, era, "resources/read", fmt.Sprintf(`{"uri":%q}`, uri))
}

// listed are the members of a list result's items, keyed by key.
func listed(t *testing.T, out, member, key string) map[string]map[string]any {
	t.Helper()
	var page map[string][]map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &page))
	items := map[string]map[string]any{}
	for _, it := range page[member] {
		items[it[key].(string)] = it
	}
	return items
}

func TestRESTListed(t *testing.T) {
	_, tab, _ := shop(t)
	for _, tc := range []struct {
		name    string
		r       *mcp.Request
		secrets bool
	}{
		{"anonymous", mcptest.Request(mcp.EraSession, ""), false},
		{"admin", admin(mcptest.Request(mcp.EraSession, "")), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tab.Call("resources/list", tc.r)
			require.NoError(t, err)
			var uris []string
			for _, it := range res.(*listResult).Resources {
				uris = append(uris, it.URI)
			}
			want := []string{aboutURI, openapiURI, "reports://daily", "rest://api/status"}
			if tc.secrets {
				want = []string{aboutURI, openapiURI, "reports://daily", "rest://api/secret", "rest://api/status"}
			}
			require.Equal(t, want, uris, "document order, after the built-ins")
			items := listed(t, wireOf(t, res), "resources", "uri")
			require.Equal(t, map[string]any{"uri": "rest://api/status", "name": "getStatus", "title": "Service status",
				"description": "Service status", "mimeType": "application/json"}, items["rest://api/status"])
			require.Equal(t, map[string]any{"uri": "reports://daily", "name": "dailyReport", "title": "Daily report",
				"description": "GET /reports/daily", "mimeType": "text/csv"}, items["reports://daily"])

			res, err = tab.Call("resources/templates/list", tc.r)
			require.NoError(t, err)
			var raws []string
			for _, it := range res.(*listTemplatesResult).ResourceTemplates {
				raws = append(raws, it.URITemplate)
			}
			want = []string{schemaTemplate, "rest://api/items/{id}"}
			if tc.secrets {
				want = append(want, "rest://api/secrets/{name}")
			}
			require.Equal(t, want, raws)
			require.Equal(t, map[string]any{"uriTemplate": "rest://api/items/{id}", "name": "getItem", "title": "One item",
				"description": "One item", "mimeType": "application/json"},
				listed(t, wireOf(t, res), "resourceTemplates", "uriTemplate")["rest://api/items/{id}"])
		})
	}
}

// What a caller sees depends on its scopes: a shared cache must not hand
// one caller's list to another (tools/list says the same).
func TestRESTListCacheScope(t *testing.T) {
	_, tab, b := shop(t)
	for _, method := range []string{"resources/list", "resources/templates/list"} {
		for _, r := range []*mcp.Request{mcptest.Request(mcp.EraStateless, ""), admin(mcptest.Request(mcp.EraStateless, ""))} {
			out, err := callMethodAs(t, tab, method, r)
			require.NoError(t, err)
			require.Contains(t, out, `"cacheScope":"private"`, method)
		}
	}

	// When nobody is refused anything, the list is everyone's.
	b.adminOnly = nil
	for _, method := range []string{"resources/list", "resources/templates/list"} {
		out, err := callMethod(t, tab, mcp.EraStateless, method, "")
		require.NoError(t, err)
		require.Contains(t, out, `"cacheScope":"public"`, method)
	}
}

func callMethodAs(t *testing.T, tab mcptest.Table, method string, r *mcp.Request) (string, error) {
	t.Helper()
	res, err := tab.Call(method, r)
	if err != nil {
		return "", err
	}
	return wireOf(t, res), nil
}

func wireOf(t *testing.T, v any) string {
	t.Helper()
	b, err := mcp.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestRESTRead(t *testing.T) {
	f, tab, b := shop(t)

	out, err := readURI(t, tab, mcp.EraSession, "rest://api/status")
	require.NoError(t, err)
	require.JSONEq(t, `{"contents":[{"uri":"rest://api/status","mimeType":"application/json","text":"{\"ok\":true}"}]}`, out)
	require.Equal(t, []fetchCall{{name: "getStatus", args: `{}`, asCaller: true}}, b.fetches)

	// A template's variables are the operation's arguments, typed as its
	// parameters are.
	for uri, args := range map[string]string{
		"rest://api/items/7":   `{"id":7}`,
		"rest://api/items/42":  `{"id":42}`,
		"rest://api/items/abc": `{"id":"abc"}`, // for the call path's validation to refuse
		"rest://api/items/7.0": `{"id":"7.0"}`,
	} {
		b.fetches = nil
		out, err := readURI(t, tab, mcp.EraStateless, uri)
		require.NoError(t, err, uri)
		require.Contains(t, out, `"uri":"`+uri+`"`)
		require.Equal(t, []fetchCall{{name: "getItem", args: args, asCaller: true}}, b.fetches, uri)
	}

	for _, tc := range []struct {
		name string
		got  call.Fetched
		uri  string
		want string
	}{
		{"json", call.Fetched{MIMEType: "application/problem+json", Body: []byte(`{"a":1}`)}, "rest://api/items/8",
			`{"uri":"rest://api/items/8","mimeType":"application/problem+json","text":"{\"a\":1}"}`},
		{"text", call.Fetched{MIMEType: "text/plain", Body: []byte("héllo")}, "rest://api/status",
			`{"uri":"rest://api/status","mimeType":"text/plain","text":"héllo"}`},
		{"empty text", call.Fetched{MIMEType: "text/plain"}, "rest://api/status",
			`{"uri":"rest://api/status","mimeType":"text/plain","text":""}`},
		{"no media type: the declared one", call.Fetched{Body: []byte("a,b\n1,2\n")}, "reports://daily",
			`{"uri":"reports://daily","mimeType":"text/csv","text":"a,b\n1,2\n"}`},
		{"image", call.Fetched{MIMEType: "image/png", Body: []byte{0x89, 'P', 'N', 'G', 0}}, "rest://api/items/9",
			`{"uri":"rest://api/items/9","mimeType":"image/png","blob":"iVBORwA="}`},
		{"text type, not UTF-8", call.Fetched{MIMEType: "application/json", Body: []byte{0xff, 0xfe}}, "rest://api/status",
			`{"uri":"rest://api/status","mimeType":"application/json","blob":"//4="}`},
		{"binary without any type", call.Fetched{Body: []byte{0xff}}, "rest://api/items/7",
			`{"uri":"rest://api/items/7","mimeType":"application/json","blob":"/w=="}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b.fetched = &tc.got
			out, err := readURI(t, tab, mcp.EraSession, tc.uri)
			require.NoError(t, err)
			require.JSONEq(t, `{"contents":[`+tc.want+`]}`, out)
		})
	}

	// Read, for prompts, reads the same way.
	b.fetched, b.fetches = &call.Fetched{MIMEType: "image/png", Body: []byte{1, 2, 3}}, nil
	got, err := f.Read(mcptest.Request(mcp.EraSession, ""), "rest://api/items/8")
	require.NoError(t, err)
	require.Equal(t, []mcp.ResourceContents{{URI: "rest://api/items/8", MimeType: "image/png", Blob: "AQID"}}, got)
	require.Equal(t, []fetchCall{{name: "getItem", args: `{"id":8}`, asCaller: true}}, b.fetches)
}

func TestRESTReadFailures(t *testing.T) {
	f, tab, b := shop(t)

	b.fetchErr = &call.FetchError{Message: "the backend answered 404 Not Found", Status: 404, NotFound: true}
	for _, era := range []mcp.Era{mcp.EraSession, mcp.EraStateless} {
		for _, uri := range []string{"rest://api/status", "rest://api/items/7"} {
			_, err := readURI(t, tab, era, uri)
			requireNotFound(t, err, era, uri)
			_, err = f.Read(mcptest.Request(era, ""), uri)
			requireNotFound(t, err, era, uri)
		}
	}

	for _, tc := range []struct {
		name    string
		err     error
		message string
		data    map[string]any
	}{
		{"status", &call.FetchError{Message: "the backend answered 500 Internal Server Error: boom", Status: 500},
			"Reading the resource failed: the backend answered 500 Internal Server Error: boom",
			map[string]any{"kind": "backend_error", "backendStatus": 500}},
		{"timeout", &call.FetchError{Message: "the backend did not answer within 5s", Timeout: true},
			"Reading the resource failed: the backend did not answer within 5s",
			map[string]any{"kind": "backend_timeout"}},
		{"wrapped", fmt.Errorf("dial tcp 10.0.0.7:8080: connect: connection refused: %w",
			&call.FetchError{Message: "the backend could not be reached"}),
			"Reading the resource failed: the backend could not be reached",
			map[string]any{"kind": "backend_error"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b.fetchErr = tc.err
			for _, era := range []mcp.Era{mcp.EraSession, mcp.EraStateless} {
				_, err := readURI(t, tab, era, "rest://api/items/7")
				var rerr *mcp.Error
				require.ErrorAs(t, err, &rerr)
				require.Equal(t, mcp.CodeInternalError, rerr.Code)
				require.Equal(t, tc.message, rerr.Message)
				require.NotContains(t, rerr.Message, "10.0.0.7", "no Go error text")
				require.Equal(t, tc.data, rerr.Data)
			}
		})
	}

	// A refusal (scopes, limits) is the answer as is.
	refusal := mcp.NewError(mcp.CodeInvalidParams, "Rate limit exceeded").WithStatus(429)
	b.fetchErr = fmt.Errorf("admit: %w", refusal)
	_, err := readURI(t, tab, mcp.EraSession, "rest://api/status")
	var rerr *mcp.Error
	require.ErrorAs(t, err, &rerr)
	require.Same(t, refusal, rerr)

	// Any other error is the gateway's: not an *mcp.Error, so the
	// transport logs it and answers -32603 "Internal error".
	b.fetchErr = errors.New("resources test: no caller")
	_, err = readURI(t, tab, mcp.EraSession, "rest://api/status")
	require.Error(t, err)
	require.False(t, errors.As(err, &rerr))

	// Without Fetch, likewise.
	f2, err := New(Config{}, Deps{})
	require.NoError(t, err)
	f2.SetCatalog(Catalog{Doc: f.current.Load().cat.Doc, Set: f.current.Load().cat.Set})
	_, err = f2.Read(mcptest.Request(mcp.EraSession, ""), "rest://api/status")
	require.ErrorContains(t, err, "no Fetch")
	require.False(t, errors.As(err, &rerr))
}

// A {id} value is one path segment: what would be another never reaches
// the backend.
func TestRESTTemplateSegments(t *testing.T) {
	_, tab, b := shop(t)
	for _, seg := range []string{"a/b", "7/", "a%2Fb", "a%2fb", `a\b`, "a%5Cb", "a%252Fb", "%2E%2E", "..", ".", "", "7?x=1", "7#f"} {
		uri := "rest://api/items/" + seg
		for _, era := range []mcp.Era{mcp.EraSession, mcp.EraStateless} {
			_, err := readURI(t, tab, era, uri)
			requireNotFound(t, err, era, uri)
		}
	}
	for _, uri := range []string{"rest://api/items", "rest://api/item/7", "rest://api/status/", "REST://api/status", "rest://api/items/7/x"} {
		_, err := readURI(t, tab, mcp.EraSession, uri)
		requireNotFound(t, err, mcp.EraSession, uri)
	}
	require.Empty(t, b.fetches)

	// Encoded text that stays one segment is decoded for the argument.
	_, err := readURI(t, tab, mcp.EraSession, "rest://api/secrets/a%20b")
	require.Error(t, err, "not for an anonymous caller")
	res, err := tab.Call("resources/read", admin(mcptest.Request(mcp.EraSession, `{"uri":"rest://api/secrets/a%20b"}`)))
	require.NoError(t, err)
	require.Equal(t, "rest://api/secrets/a%20b", res.(*readResult).Contents[0].URI)
	require.Equal(t, []fetchCall{{name: "getSecretByName", args: `{"name":"a b"}`, asCaller: true}}, b.fetches)
}

func TestRESTPermits(t *testing.T) {
	f, tab, b := shop(t)
	for _, era := range []mcp.Era{mcp.EraSession, mcp.EraStateless} {
		for _, uri := range []string{"rest://api/secret", "rest://api/secrets/x"} {
			_, err := readURI(t, tab, era, uri)
			requireNotFound(t, err, era, uri)
			_, err = f.Read(mcptest.Request(era, ""), uri)
			requireNotFound(t, err, era, uri)
			_, _, err = f.Known(mcptest.Request(era, ""), uri)
			requireNotFound(t, err, era, uri)
		}
	}
	require.Empty(t, b.fetches, "what the caller may not see is never fetched")

	r := admin(mcptest.Request(mcp.EraSession, `{"uri":"rest://api/secret"}`))
	_, err := tab.Call("resources/read", r)
	require.NoError(t, err)
	watched, _, err := f.Known(r, "rest://api/secret")
	require.NoError(t, err)
	require.True(t, watched)
	require.Equal(t, []fetchCall{{name: "getSecret", args: `{}`, asCaller: true}}, b.fetches)

	// The gateway's own poll is nobody's: no caller to ask about.
	permits := b.permits
	_, err = f.Poll("rest://api/secret", call.Conditional{})
	require.NoError(t, err)
	require.Equal(t, permits, b.permits)
	require.False(t, b.fetches[1].asCaller)

	// Without Permits, every caller may read everything.
	f2, err := New(Config{}, Deps{Fetch: b.fetch})
	require.NoError(t, err)
	f2.SetCatalog(*f.current.Load().cat)
	_, err = f2.Read(mcptest.Request(mcp.EraSession, ""), "rest://api/secret")
	require.NoError(t, err)
}

func TestKnownAndWatched(t *testing.T) {
	f, _, _ := shop(t,
		Declared{URI: "ops://inventory", Operation: "getStatus"},
		Declared{URITemplate: "ops://items/{id}", Operation: "getItem"},
		Declared{URI: "docs://static", Text: text("static")},
		Declared{URITemplate: "docs://pages/{n}", Text: text("page {{.n}}")},
	)
	for _, tc := range []struct {
		uri      string
		watched  bool
		interval time.Duration
	}{
		{"rest://api/status", true, 0},
		{"rest://api/items/7", true, 0},
		{"reports://daily", true, 30 * time.Second},
		{"ops://inventory", true, 0},
		{"ops://items/7", true, 0},
		{"docs://static", false, 0},
		{"docs://pages/2", false, 0},
		{aboutURI, false, 0},
		{openapiURI, false, 0},
	} {
		watched, interval := f.Watched(tc.uri)
		require.Equal(t, tc.watched, watched, tc.uri)
		require.Equal(t, tc.interval, interval, tc.uri)
		for _, era := range []mcp.Era{mcp.EraSession, mcp.EraStateless} {
			watched, interval, err := f.Known(mcptest.Request(era, ""), tc.uri)
			require.NoError(t, err, tc.uri)
			require.Equal(t, tc.watched, watched, tc.uri)
			require.Equal(t, tc.interval, interval, tc.uri)
		}
	}
	for _, uri := range []string{"rest://api/nope", "rest://api/items/a%2Fb", "ops://items/", "docs://other"} {
		watched, interval := f.Watched(uri)
		require.False(t, watched, uri)
		require.Zero(t, interval, uri)
		for _, era := range []mcp.Era{mcp.EraSession, mcp.EraStateless} {
			_, _, err := f.Known(mcptest.Request(era, ""), uri)
			requireNotFound(t, err, era, uri)
		}
	}
}

func TestPoll(t *testing.T) {
	f, _, b := shop(t)

	b.fetched = &call.Fetched{Status: 200, MIMEType: "application/json", ETag: `"v1"`, LastModified: "Mon, 02 Jan 2006 15:04:05 GMT", Body: []byte(`{"n":1}`)}
	first, err := f.Poll("rest://api/items/7", call.Conditional{})
	require.NoError(t, err)
	require.Equal(t, `"v1"`, first.ETag)
	require.Equal(t, "Mon, 02 Jan 2006 15:04:05 GMT", first.LastModified)
	require.False(t, first.NotModified)
	require.False(t, first.Gone)
	require.NotEmpty(t, first.Hash)
	require.Equal(t, []fetchCall{{name: "getItem", args: `{"id":7}`, asCaller: false}}, b.fetches)

	again, err := f.Poll("rest://api/items/7", call.Conditional{})
	require.NoError(t, err)
	require.Equal(t, first, again, "the same contents, the same hash")

	hashes := map[string]bool{first.Hash: true}
	for _, got := range []call.Fetched{
		{MIMEType: "application/json", Body: []byte(`{"n":2}`)},
		{MIMEType: "text/plain", Body: []byte(`{"n":1}`)}, // the same bytes as another type
		{MIMEType: "image/png", Body: []byte(`{"n":1}`)},
		{MIMEType: "image/png", Body: []byte{0xff}},
	} {
		b.fetched = &got
		snap, err := f.Poll("rest://api/items/7", call.Conditional{})
		require.NoError(t, err)
		require.False(t, hashes[snap.Hash], "%s %q", got.MIMEType, got.Body)
		hashes[snap.Hash] = true
	}

	// A conditional poll: the validators go to the backend, and a 304
	// keeps them (the backend's own when it repeats them).
	cond := call.Conditional{ETag: `"v1"`, LastModified: "Mon, 02 Jan 2006 15:04:05 GMT"}
	b.fetches = nil
	b.fetched = &call.Fetched{Status: 304, NotModified: true}
	snap, err := f.Poll("rest://api/items/7", cond)
	require.NoError(t, err)
	require.Equal(t, Snapshot{NotModified: true, ETag: cond.ETag, LastModified: cond.LastModified}, snap)
	require.Equal(t, []fetchCall{{name: "getItem", args: `{"id":7}`, cond: cond}}, b.fetches)
	b.fetched = &call.Fetched{Status: 304, NotModified: true, ETag: `"v2"`}
	snap, err = f.Poll("rest://api/items/7", cond)
	require.NoError(t, err)
	require.Equal(t, Snapshot{NotModified: true, ETag: `"v2"`, LastModified: cond.LastModified}, snap)

	// 404 or 410: gone, not an error.
	for _, status := range []int{404, 410} {
		b.fetchErr = &call.FetchError{Message: "the backend answered", Status: status, NotFound: true}
		snap, err = f.Poll("rest://api/status", call.Conditional{})
		require.NoError(t, err)
		require.True(t, snap.Gone)
		require.Equal(t, "gone", snap.Hash)
	}

	b.fetchErr = &call.FetchError{Message: "the backend answered 503 Service Unavailable", Status: 503}
	_, err = f.Poll("rest://api/status", call.Conditional{})
	var rerr *mcp.Error
	require.ErrorAs(t, err, &rerr)
	require.Equal(t, mcp.CodeInternalError, rerr.Code)

	_, err = f.Poll("rest://api/nope", call.Conditional{})
	requireNotFound(t, err, mcp.EraSession, "rest://api/nope")
}

func TestURIsForPath(t *testing.T) {
	f, _, _ := shop(t)
	for path, want := range map[string][]string{
		"/items/7":       {"rest://api/items/7"},
		"/items/7?x=1":   {"rest://api/items/7"},
		"items/7/":       {"rest://api/items/7"},
		"/items/a%2Fb":   {"rest://api/items/a%2Fb"}, // as encoded as the path is
		"/status":        {"rest://api/status"},
		"/reports/daily": {"reports://daily"},
		"/secrets/k":     {"rest://api/secrets/k"},
		"/items":         nil,
		"/items/7/x":     nil,
		"/items//":       nil,
		"/nope":          nil,
		"/":              nil,
		"":               nil,
	} {
		require.Equal(t, want, f.URIsForPath(path), "%q", path)
	}

	before, err := New(Config{}, Deps{})
	require.NoError(t, err)
	require.Nil(t, before.URIsForPath("/items/7"), "no catalog, no resources")
}

func TestRESTVariableValues(t *testing.T) {
	f, _, _ := shop(t)
	values, ok := f.VariableValues(mcptest.Request(mcp.EraSession, ""), "rest://api/items/{id}", "id")
	require.True(t, ok)
	require.Equal(t, []string{"7", "8", "9"}, values, "the parameter's enum")
	_, ok = f.VariableValues(mcptest.Request(mcp.EraSession, ""), "rest://api/secrets/{name}", "name")
	require.False(t, ok, "a template the caller may not read has no candidates for it")
	admin := mcptest.Request(mcp.EraSession, "")
	admin.Principal = &mcp.Principal{Subject: "admin"}
	values, ok = f.VariableValues(admin, "rest://api/secrets/{name}", "name")
	require.True(t, ok)
	require.Empty(t, values)
	_, ok = f.VariableValues(mcptest.Request(mcp.EraSession, ""), "rest://api/items/{id}", "name")
	require.False(t, ok)
	_, ok = f.VariableValues(mcptest.Request(mcp.EraSession, ""), "rest://api/status", "")
	require.False(t, ok, "a fixed resource is no template")
}

// A declared resource with a REST-backed one's URI wins.
func TestDeclaredBeforeREST(t *testing.T) {
	_, tab, b := shop(t, Declared{URI: "rest://api/status", Text: text("declared")})
	out, err := callMethod(t, tab, mcp.EraSession, "resources/list", "")
	require.NoError(t, err)
	items := listed(t, out, "resources", "uri")
	require.Equal(t, "rest://api/status", items["rest://api/status"]["name"], "the declared entry, named by its URI")
	var page listResult
	require.NoError(t, json.Unmarshal([]byte(out), &page))
	var uris []string
	for _, r := range page.Resources {
		uris = append(uris, r.URI)
	}
	require.Equal(t, []string{aboutURI, openapiURI, "rest://api/status", "reports://daily"}, uris, "listed once, as declared")
	require.Equal(t, "declared", readText(t, tab, "rest://api/status", "text/plain"))
	require.Empty(t, b.fetches)
}

func TestDeclaredOperation(t *testing.T) {
	decl := []Declared{
		{URI: "ops://inventory", Name: "inventory", Operation: "getStatus", Arguments: map[string]any{"verbose": true, "n": 3}},
		{URITemplate: "ops://items/{id}", Operation: "getItem", MIMEType: "application/vnd.item+json",
			Arguments: map[string]any{"expand": "all", "id": 1}, Values: map[string][]string{"id": {"7"}}},
		{URITemplate: "ops://secrets/{name}", Operation: "getSecretByName"},
	}
	f, tab, b := shop(t, decl...)

	out, err := callMethod(t, tab, mcp.EraSession, "resources/list", "")
	require.NoError(t, err)
	require.Equal(t, map[string]any{"uri": "ops://inventory", "name": "inventory"}, listed(t, out, "resources", "uri")["ops://inventory"])
	out, err = callMethod(t, tab, mcp.EraSession, "resources/templates/list", "")
	require.NoError(t, err)
	tmpls := listed(t, out, "resourceTemplates", "uriTemplate")
	require.Equal(t, map[string]any{"uriTemplate": "ops://items/{id}", "name": "ops://items/{id}", "mimeType": "application/vnd.item+json"},
		tmpls["ops://items/{id}"])
	require.NotContains(t, tmpls, "ops://secrets/{name}", "backed by an operation the caller may not use")
	values, ok := f.VariableValues(mcptest.Request(mcp.EraSession, ""), "ops://items/{id}", "id")
	require.True(t, ok)
	require.Equal(t, []string{"7"}, values)

	// The fixed arguments and the variables, typed as the tool takes them.
	b.result = &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: "ignored"}}, StructuredContent: json.RawMessage(`{"count":2}`)}
	out, err = readURI(t, tab, mcp.EraSession, "ops://inventory")
	require.NoError(t, err)
	require.JSONEq(t, `{"contents":[{"uri":"ops://inventory","mimeType":"application/json","text":"{\"count\":2}"}]}`, out)
	out, err = readURI(t, tab, mcp.EraStateless, "ops://items/7")
	require.NoError(t, err)
	require.JSONEq(t, `{"contents":[{"uri":"ops://items/7","mimeType":"application/vnd.item+json","text":"{\"count\":2}"}],"resultType":"complete"}`, out)
	require.Equal(t, []toolCall{
		{name: "getStatus", args: `{"n":3,"verbose":true}`},
		{name: "getItem", args: `{"expand":"all","id":7}`}, // the variable over the fixed argument
	}, b.calls)
	require.Empty(t, b.fetches)

	for _, tc := range []struct {
		name   string
		result *mcp.CallToolResult
		want   string
	}{
		{"text", mcp.TextResult("hello"), `{"uri":"ops://inventory","mimeType":"text/plain","text":"hello"}`},
		{"empty", &mcp.CallToolResult{}, `{"uri":"ops://inventory","mimeType":"text/plain","text":""}`},
		{"image", &mcp.CallToolResult{Content: []mcp.Content{{Type: "image", Data: "AQID", MimeType: "image/png"}}},
			`{"uri":"ops://inventory","mimeType":"image/png","blob":"AQID"}`},
		{"embedded text", &mcp.CallToolResult{Content: []mcp.Content{{Type: "resource",
			Resource: &mcp.ResourceContents{URI: "x://y", MimeType: "text/markdown", Text: "# T"}}}},
			`{"uri":"ops://inventory","mimeType":"text/markdown","text":"# T"}`},
		{"embedded blob", &mcp.CallToolResult{Content: []mcp.Content{{Type: "resource",
			Resource: &mcp.ResourceContents{URI: "x://y", Blob: "AA=="}}}},
			`{"uri":"ops://inventory","mimeType":"application/octet-stream","blob":"AA=="}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b.result = tc.result
			out, err := readURI(t, tab, mcp.EraSession, "ops://inventory")
			require.NoError(t, err)
			require.JSONEq(t, `{"contents":[`+tc.want+`]}`, out)
		})
	}

	// A tool error is the read's error, with the tool's text.
	b.result = mcp.ErrorResult("the backend answered 500 Internal Server Error")
	for _, era := range []mcp.Era{mcp.EraSession, mcp.EraStateless} {
		_, err = readURI(t, tab, era, "ops://items/8")
		var rerr *mcp.Error
		require.ErrorAs(t, err, &rerr)
		require.Equal(t, mcp.CodeInternalError, rerr.Code)
		require.Equal(t, "Reading the resource failed: the backend answered 500 Internal Server Error", rerr.Message)
		require.Equal(t, map[string]any{"kind": "tool_error"}, rerr.Data)
	}
	// So is CallTool's own.
	refusal := mcp.NewError(mcp.CodeInvalidParams, "Forbidden")
	b.callErr = refusal
	_, err = readURI(t, tab, mcp.EraSession, "ops://inventory")
	var rerr *mcp.Error
	require.ErrorAs(t, err, &rerr)
	require.Same(t, refusal, rerr)
	b.callErr = nil

	// What the caller may not use is not there; for an admin it is.
	b.calls, b.result = nil, nil
	_, err = readURI(t, tab, mcp.EraSession, "ops://secrets/k")
	requireNotFound(t, err, mcp.EraSession, "ops://secrets/k")
	require.Empty(t, b.calls)
	_, err = tab.Call("resources/read", admin(mcptest.Request(mcp.EraSession, `{"uri":"ops://secrets/k"}`)))
	require.NoError(t, err)
	require.Equal(t, []toolCall{{name: "getSecretByName", args: `{"name":"k"}`}}, b.calls)

	// A poll calls the tool as nobody, and hashes what it answers.
	b.calls = nil
	snap, err := f.Poll("ops://inventory", call.Conditional{})
	require.NoError(t, err)
	require.NotEmpty(t, snap.Hash)
	require.Equal(t, []toolCall{{name: "getStatus", args: `poll {"n":3,"verbose":true}`}}, b.calls)
	b.result = mcp.TextResult("changed")
	changed, err := f.Poll("ops://inventory", call.Conditional{})
	require.NoError(t, err)
	require.NotEqual(t, snap.Hash, changed.Hash)
}

// Before SetCatalog there is no tool to type the variables by: each goes
// as text.
func TestDeclaredOperationWithoutCatalog(t *testing.T) {
	b := &backend{}
	f, err := New(Config{Declared: []Declared{{URITemplate: "ops://items/{id}", Operation: "getItem"}}}, b.deps())
	require.NoError(t, err)
	got, err := f.Read(mcptest.Request(mcp.EraSession, ""), "ops://items/7")
	require.NoError(t, err)
	require.Equal(t, "from getItem", got[0].Text)
	require.Equal(t, []toolCall{{name: "getItem", args: `{"id":"7"}`}}, b.calls)

	f, err = New(Config{Declared: []Declared{{URI: "ops://x", Operation: "getItem"}}}, Deps{})
	require.NoError(t, err)
	_, err = f.Read(mcptest.Request(mcp.EraSession, ""), "ops://x")
	require.ErrorContains(t, err, "no CallTool")
	var rerr *mcp.Error
	require.False(t, errors.As(err, &rerr))
}

func TestNewRefusesOperationWithContents(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Declared
		want string
	}{
		{"text", Declared{URI: "ops://a", Operation: "getStatus", Text: text("x")}, "operation is a source of its own"},
		{"blob", Declared{URI: "ops://a", Operation: "getStatus", Blob: []byte{1}}, "operation is a source of its own"},
		{"template text", Declared{URITemplate: "ops://a/{id}", Operation: "getItem", Text: text("{{.id}}")}, "operation is a source of its own"},
		{"arguments not JSON", Declared{URI: "ops://a", Operation: "getStatus", Arguments: map[string]any{"f": func() {}}}, "arguments must be JSON values"},
		{"reserved scheme", Declared{URI: "gateway://x", Operation: "getStatus"}, "is reserved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(Config{Declared: []Declared{tc.d}}, Deps{})
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, "entry 0 ")
		})
	}
}
