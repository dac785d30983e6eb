package toolgen

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/openapi"
)

func resourceNames(set *Set) []string {
	var names []string
	for _, r := range set.Resources() {
		names = append(names, r.Tool.Name)
	}
	return names
}

func resource(t *testing.T, set *Set, name string) *ResourceOp {
	t.Helper()
	r, ok := set.Resource(name)
	require.True(t, ok, "no resource %q; have %v; warnings %v", name, resourceNames(set), set.Warnings())
	return r
}

// warningsAt are the messages of the warnings at loc.
func warningsAt(set *Set, loc string) []string {
	var out []string
	for _, w := range set.Warnings() {
		if w.Location == loc {
			out = append(out, w.Message)
		}
	}
	return out
}

// requireWarning checks that a warning at loc contains want, or that none
// at loc mentions a resource when want is empty.
func requireWarning(t *testing.T, set *Set, loc, want string) {
	t.Helper()
	got := warningsAt(set, loc)
	if want == "" {
		for _, m := range got {
			require.NotContains(t, m, "resource", "at %s", loc)
		}
		return
	}
	for _, m := range got {
		if strings.Contains(m, want) {
			return
		}
	}
	require.Failf(t, "warning missing", "no warning at %s contains %q; have %q", loc, want, got)
}

func TestResourceSelection(t *testing.T) {
	paths := `
  /pets:
    get: {operationId: listPets, tags: [pets], x-mcp-resource: true, ` + okResponse + `}
    post: {operationId: createPet, tags: [pets], x-mcp-resource: true, ` + okResponse + `}
  /pets/{id}:
    parameters: [{name: id, in: path, required: true, schema: {type: string}}]
    get: {operationId: getPet, tags: [pets], ` + okResponse + `}
  /off:
    get: {operationId: off, x-mcp-resource: false, ` + okResponse + `}
  /text:
    get: {operationId: text, x-mcp-resource: "True", ` + okResponse + `}
  /hidden:
    get: {operationId: hidden, x-mcp: false, x-mcp-resource: {}, ` + okResponse + `}
  /bad/number:
    get: {operationId: badNumber, tags: [bad], x-mcp-resource: 3, ` + okResponse + `}
  /bad/list:
    get: {operationId: badList, tags: [bad], x-mcp-resource: [uri], ` + okResponse + `}
  /bad/string:
    get: {operationId: badString, tags: [bad], x-mcp-resource: "yes", ` + okResponse + `}
  /bad/field:
    get: {operationId: badField, tags: [bad], x-mcp-resource: {uri: 5}, ` + okResponse + `}
  /bad/duration:
    get: {operationId: badDuration, tags: [bad], x-mcp-resource: {pollInterval: soon}, ` + okResponse + `}
  /bad/short:
    get: {operationId: badShort, tags: [bad], x-mcp-resource: {pollInterval: 500ms}, ` + okResponse + `}
  /bad/seconds:
    get: {operationId: badSeconds, tags: [bad], x-mcp-resource: {pollInterval: 0.5}, ` + okResponse + `}
  /bad/kind:
    get: {operationId: badKind, tags: [bad], x-mcp-resource: {pollInterval: true}, ` + okResponse + `}
  /bad/mime:
    get: {operationId: badMime, tags: [bad], x-mcp-resource: {mimeType: "not a type"}, ` + okResponse + `}
`
	for _, tc := range []struct {
		name  string
		opts  Options
		want  []string
		tools []string // nil: all but hidden
	}{
		{"extension only", Options{}, []string{"hidden", "listPets", "text"}, nil},
		{"glob by tag", Options{ResourceOperations: []string{"pets"}}, []string{"hidden", "listPets", "getPet", "text"}, nil},
		{"glob by operationId", Options{ResourceOperations: []string{"get*"}}, []string{"hidden", "listPets", "getPet", "text"}, nil},
		{"glob by path", Options{ResourceOperations: []string{"/pets/*"}}, []string{"hidden", "listPets", "getPet", "text"}, nil},
		{"a glob wins over false", Options{ResourceOperations: []string{"off"}}, []string{"hidden", "off", "listPets", "text"}, nil},
		{"a glob does not mend a malformed value", Options{ResourceOperations: []string{"bad"}}, []string{"hidden", "listPets", "text"}, nil},
		{"a glob never selects another method", Options{ResourceOperations: []string{"createPet"}}, []string{"hidden", "listPets", "text"}, nil},
		{"independent of Include", Options{Include: []string{"getPet"}}, []string{"hidden", "listPets", "text"}, []string{"getPet"}},
		{"independent of Exclude", Options{Exclude: []string{"pets", "text"}}, []string{"hidden", "listPets", "text"},
			[]string{"off", "badNumber", "badList", "badString", "badField", "badDuration", "badShort", "badSeconds", "badKind", "badMime"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := genYAML(t, paths, tc.opts)
			require.Equal(t, tc.want, resourceNames(set))
			for _, r := range set.Resources() {
				_, listed := set.Lookup(r.Tool.Name)
				require.Equal(t, r.IsTool, listed, r.Tool.Name)
				if tc.tools != nil {
					require.Equal(t, r.IsTool, slices.Contains(tc.tools, r.Tool.Name), r.Tool.Name)
				}
			}
			var tools []string
			for _, tl := range set.Tools() {
				tools = append(tools, tl.Name)
			}
			require.NotContains(t, tools, "hidden", "x-mcp: false is never a tool, though a resource")
			if tc.tools != nil {
				require.ElementsMatch(t, tc.tools, tools)
			}

			requireWarning(t, set, "paths./pets.post", "x-mcp-resource is read only on GET operations; ignored")
			for loc, want := range map[string]string{
				"paths./bad/number.get":   "no resource: x-mcp-resource should be true, false or an object, not 3",
				"paths./bad/list.get":     "no resource: x-mcp-resource should be true, false or an object",
				"paths./bad/string.get":   `should be true, false or an object, not yes`,
				"paths./bad/field.get":    "no resource: x-mcp-resource uri should be a string, not 5",
				"paths./bad/duration.get": `pollInterval "soon" is not a duration`,
				"paths./bad/short.get":    "pollInterval must be at least 1s, not 500ms",
				"paths./bad/seconds.get":  "pollInterval must be at least 1s, not 0.5",
				"paths./bad/kind.get":     "pollInterval should be a duration",
				"paths./bad/mime.get":     `mimeType "not a type" is not a media type`,
			} {
				requireWarning(t, set, loc, want)
			}
			requireWarning(t, set, "paths./off.get", "")
		})
	}
}

func TestResourceGlobValidated(t *testing.T) {
	d, err := openapi.LoadData(context.Background(), []byte("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n"), "", openapi.LoadOptions{})
	require.NoError(t, err)
	_, err = Generate(d, Options{ResourceOperations: []string{"[unclosed"}})
	require.ErrorContains(t, err, `glob "[unclosed"`)
}

func TestResourceTool(t *testing.T) {
	set := genYAML(t, `
  /a:
    get: {operationId: both, x-mcp-resource: true, `+okResponse+`}
  /b:
    get: {operationId: b, x-mcp-resource: true, `+okResponse+`}
  /c/{id}:
    get:
      operationId: only
      x-mcp-resource: true
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
        - {name: q, in: query, schema: {type: string}}
      `+okResponse+`
`, Options{Exclude: []string{"only"}})

	both := resource(t, set, "both")
	require.True(t, both.IsTool)
	require.Same(t, tool(t, set, "both"), both.Tool, "a resource that is a tool shares the *Tool")

	only := resource(t, set, "only")
	require.False(t, only.IsTool)
	_, listed := set.Lookup("only")
	require.False(t, listed, "a resource's own tool is not listed")
	require.Equal(t, "GET /c/{id}", method(only.Tool), "it has a Binding the call path can run")
	require.Len(t, only.Tool.Binding.Params, 2)
	require.Equal(t, []string{"id"}, required(t, only.Tool.InputSchema))
	require.Equal(t, map[string]string{"id": "id"}, only.Vars)
	require.Equal(t, "paths./c/{id}.get", only.Location)

	_, ok := set.Resource("nope")
	require.False(t, ok)
	require.Equal(t, []string{"both", "b", "only"}, resourceNames(set), "document order")
}

func TestResourceNames(t *testing.T) {
	paths := `
  /a:
    get: {operationId: shared, x-mcp: false, x-mcp-resource: true, ` + okResponse + `}
  /b:
    get: {operationId: shared, ` + okResponse + `}
  /c:
    get: {x-mcp-name: picked, x-mcp: false, x-mcp-resource: true, ` + okResponse + `}
  /d:
    get: {operationId: picked, ` + okResponse + `}
  /e:
    get: {x-mcp: false, x-mcp-resource: {name: "Any text, not unique"}, ` + okResponse + `}
  /f:
    get: {operationId: f, x-mcp: false, x-mcp-resource: {name: "Any text, not unique"}, ` + okResponse + `}
`
	set := genYAML(t, paths, Options{})
	require.Equal(t, "GET /b", method(tool(t, set, "shared")), "tools keep their names: resources are named after them")
	require.Equal(t, "GET /d", method(tool(t, set, "picked")), "even over x-mcp-name")
	require.Equal(t, []string{"shared_" + shortHash("GET /a"), "picked_" + shortHash("GET /c"), "get_e", "f"}, resourceNames(set))
	requireWarning(t, set, "paths./a.get", `tool name "shared" is already taken`)
	require.Equal(t, "Any text, not unique", resource(t, set, "get_e").Name, "Name is free text")
	require.Equal(t, "Any text, not unique", resource(t, set, "f").Name)
	require.Equal(t, "shared_"+shortHash("GET /a"), resource(t, set, "shared_"+shortHash("GET /a")).Name, "Name defaults to the tool name")
}

// Resources change nothing about the tools: every golden document gives
// the same tools/list with every GET operation a resource.
func TestResourcesLeaveToolsAlone(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	require.NoError(t, err)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			opts := goldenOptions(t, loadDoc(t, file))
			_, plain := generateFile(t, file, opts)
			opts.ResourceOperations = []string{"*", "/*", "/*/*", "/*/*/*", "/*/*/*/*", "/*/*/*/*/*"}
			_, with := generateFile(t, file, opts)
			var a, b bytes.Buffer
			require.NoError(t, Print(&a, plain, "json"))
			require.NoError(t, Print(&b, with, "json"))
			require.Equal(t, a.String(), b.String())
			require.Empty(t, plain.Resources())
		})
	}
}

func TestResourceURIs(t *testing.T) {
	for _, tc := range []struct {
		name, path, ext string
		params          string // the operation's parameters; idParam when empty and the path has {id}
		uri, template   string
		vars            map[string]string
		warn            string // set: no resource, a warning with this text
	}{
		{name: "fixed", path: "/pets", ext: "true", uri: "rest://api/pets"},
		{name: "root", path: "/", ext: "true", uri: "rest://api/"},
		{name: "template", path: "/pets/{id}", ext: "true", template: "rest://api/pets/{id}", vars: map[string]string{"id": "id"}},
		{name: "several", path: "/users/{user}/repos/{repo}", ext: "true",
			params:   "[{name: user, in: path, required: true, schema: {type: string}}, {name: repo, in: path, required: true, schema: {type: string}}]",
			template: "rest://api/users/{user}/repos/{repo}", vars: map[string]string{"user": "user", "repo": "repo"}},
		{name: "inside a segment", path: "/pets/{id}.json", ext: "true", template: "rest://api/pets/{id}.json", vars: map[string]string{"id": "id"}},
		{name: "dotted varname kept", path: "/p/{a.b}", ext: "true",
			params:   "[{name: a.b, in: path, required: true, schema: {type: string}}]",
			template: "rest://api/p/{a.b}", vars: map[string]string{"a.b": "a.b"}},
		{name: "sanitized variable", path: "/pets/{pet-id}", ext: "true",
			params:   "[{name: pet-id, in: path, required: true, schema: {type: string}}]",
			template: "rest://api/pets/{pet_id}", vars: map[string]string{"pet_id": "pet-id"}},
		{name: "sanitized variable clear of a real one", path: "/a/{pet_id}/{pet-id}", ext: "true",
			params:   "[{name: pet_id, in: path, required: true, schema: {type: string}}, {name: pet-id, in: path, required: true, schema: {type: string}}]",
			template: "rest://api/a/{pet_id}/{pet_id_2}", vars: map[string]string{"pet_id": "pet_id", "pet_id_2": "pet-id"}},
		{name: "undeclared path parameter", path: "/pets/{id}", params: "[]", ext: "true", template: "rest://api/pets/{id}", vars: map[string]string{"id": "id"}},
		{name: "literal percent-encoded", path: "/a|b/{id}", ext: "true", template: "rest://api/a%7Cb/{id}", vars: map[string]string{"id": "id"}},
		{name: "explicit fixed", path: "/pets", ext: "{uri: 'pets://all'}", uri: "pets://all"},
		{name: "explicit template", path: "/pets/{id}", ext: "{uri: 'pets://pet/{id}'}", template: "pets://pet/{id}", vars: map[string]string{"id": "id"}},
		{name: "explicit reserved expansion", path: "/files/{id}", ext: "{uri: 'files:///{+id}'}", template: "files:///{+id}", vars: map[string]string{"id": "id"}},
		{name: "explicit sanitized name", path: "/pets/{pet-id}", ext: "{uri: 'pets://{pet_id}'}",
			params:   "[{name: pet-id, in: path, required: true, schema: {type: string}}]",
			template: "pets://{pet_id}", vars: map[string]string{"pet_id": "pet-id"}},

		{name: "explicit invalid varname", path: "/pets/{pet-id}", ext: "{uri: 'pets://{pet-id}'}",
			params: "[{name: pet-id, in: path, required: true, schema: {type: string}}]",
			warn:   `no resource: uri "pets://{pet-id}": {pet-id}: "pet-id" is not a template variable name`},
		{name: "variable missing", path: "/pets/{id}", ext: "{uri: 'pets://all'}", warn: "path parameter {id} has no variable"},
		{name: "variable not a parameter", path: "/pets/{id}", ext: "{uri: 'pets://{id}/{x}'}", warn: "{x} is not a path parameter: the variables are {id}"},
		{name: "variable on a fixed path", path: "/pets", ext: "{uri: 'pets://{id}'}", warn: "{id} is not a path parameter: the path has none"},
		{name: "variable twice", path: "/pets/{id}", ext: "{uri: 'pets://{id}/{+id}'}", warn: "{id} appears twice"},
		{name: "parameter twice in the path", path: "/a/{id}/b/{id}", ext: "true", warn: `uri "rest://api/a/{id}/b/{id}": {id} appears twice`},
		{name: "fragment expansion", path: "/pets/{id}", ext: "{uri: 'pets://x{#id}'}", warn: "{#id} is fragment expansion"},
		{name: "level 3", path: "/pets/{id}", ext: "{uri: 'pets://x{/id}'}", warn: "{/id} uses a level 3 operator"},
		{name: "several variables", path: "/pets/{id}", ext: "{uri: 'pets://{id,x}'}", warn: "{id,x} needs level 3 or 4"},
		{name: "prefix", path: "/pets/{id}", ext: "{uri: 'pets://{id:3}'}", warn: "{id:3} needs level 3 or 4"},
		{name: "explode", path: "/pets/{id}", ext: "{uri: 'pets://{id*}'}", warn: "{id*} needs level 3 or 4"},
		{name: "empty expression", path: "/pets", ext: "{uri: 'pets://{}'}", warn: `{}: "" is not a template variable name`},
		{name: "unclosed", path: "/pets/{id}", ext: "{uri: 'pets://{id'}", warn: "unclosed {"},
		{name: "stray close", path: "/pets", ext: "{uri: 'pets://a}'}", warn: "} without {"},
		{name: "bad literal", path: "/pets", ext: "{uri: 'pets://a b'}", warn: `' ' may not appear outside an expression`},
		{name: "bad percent", path: "/pets", ext: "{uri: 'pets://100%'}", warn: "% not followed by two hex digits"},
		{name: "no scheme", path: "/pets/{id}", ext: "{uri: '/pets/{id}'}", warn: "it must begin with a scheme"},
		{name: "scheme not literal", path: "/pets/{id}", ext: "{uri: '{id}://x'}", warn: "it must begin with a scheme"},
		{name: "bad scheme", path: "/pets", ext: "{uri: '1pets://x'}", warn: "it must begin with a scheme"},
		{name: "gateway scheme", path: "/pets", ext: "{uri: 'gateway://pets'}", warn: "the scheme gateway: is reserved"},
		{name: "http scheme", path: "/pets/{id}", ext: "{uri: 'HTTP://x/{id}'}", warn: "the scheme HTTP: is reserved"},
		{name: "https scheme", path: "/pets", ext: "{uri: 'https://x/pets'}", warn: "the scheme https: is reserved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := tc.params
			if params == "" && strings.Contains(tc.path, "{id}") {
				params = "[{name: id, in: path, required: true, schema: {type: string}}]"
			}
			if params == "" {
				params = "[]"
			}
			set := genYAML(t, `
  `+tc.path+`:
    get:
      operationId: op
      x-mcp-resource: `+tc.ext+`
      parameters: `+params+`
      `+okResponse+`
`, Options{})
			loc := "paths." + tc.path + ".get"
			if tc.warn != "" {
				require.Empty(t, set.Resources())
				requireWarning(t, set, loc, tc.warn)
				return
			}
			r := resource(t, set, "op")
			require.Equal(t, tc.uri, r.URI)
			require.Equal(t, tc.template, r.URITemplate)
			require.Equal(t, tc.vars, r.Vars)
			requireWarning(t, set, loc, "")
		})
	}
}

func TestResourceUnreadable(t *testing.T) {
	for _, tc := range []struct {
		name, op, warn string
	}{
		{"required query", "parameters: [{name: q, in: query, required: true, schema: {type: string}}]",
			`no resource: query parameter "q" is required, and a resource URI carries only path parameters`},
		{"required header", "parameters: [{name: X-Tenant, in: header, required: true, schema: {type: string}}]",
			`header parameter "X-Tenant" is required`},
		{"required cookie", "parameters: [{name: c, in: cookie, required: true, schema: {type: string}}]",
			`cookie parameter "c" is required`},
		{"required body", "requestBody: {required: true, content: {application/json: {schema: {type: object}}}}",
			"no resource: the request body is required, and a resource read sends none"},
		{"optional query", "parameters: [{name: q, in: query, schema: {type: string}}]", ""},
		{"optional body", "requestBody: {content: {application/json: {schema: {type: object}}}}", ""},
		{"ignored header", "parameters: [{name: Authorization, in: header, required: true, schema: {type: string}}]", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := genYAML(t, `
  /a:
    get:
      operationId: a
      x-mcp-resource: true
      `+tc.op+`
      `+okResponse+`
`, Options{})
			if tc.warn == "" {
				require.Equal(t, []string{"a"}, resourceNames(set))
				return
			}
			require.Empty(t, set.Resources())
			requireWarning(t, set, "paths./a.get", tc.warn)
			tool(t, set, "a") // still a tool
		})
	}
}

func TestResourceDuplicates(t *testing.T) {
	set := genYAML(t, `
  /a/{x}:
    get:
      operationId: first
      x-mcp-resource: {uri: 'r://t/{x}'}
      parameters: [{name: x, in: path, required: true, schema: {type: string}}]
      `+okResponse+`
  /b/{y}:
    get:
      operationId: second
      x-mcp-resource: {uri: 'r://t/{y}'}
      parameters: [{name: y, in: path, required: true, schema: {type: string}}]
      `+okResponse+`
  /c/{z}:
    get:
      operationId: reserved
      x-mcp-resource: {uri: 'r://t/{+z}'}
      parameters: [{name: z, in: path, required: true, schema: {type: string}}]
      `+okResponse+`
  /d:
    get: {operationId: fixed, x-mcp-resource: {uri: 'r://fixed'}, `+okResponse+`}
  /e:
    get: {operationId: fixedAgain, x-mcp-resource: {uri: 'r://fixed'}, `+okResponse+`}
`, Options{})
	require.Equal(t, []string{"first", "reserved", "fixed"}, resourceNames(set), "{+z} matches other URIs than {x}")
	requireWarning(t, set, "paths./b/{y}.get", `no resource: uri "r://t/{y}" is that of the resource at paths./a/{x}.get (up to variable names)`)
	requireWarning(t, set, "paths./e.get", `no resource: uri "r://fixed" is that of the resource at paths./d.get`)
}

func TestResourceDescribed(t *testing.T) {
	set := genYAML(t, `
  /defaults:
    get:
      operationId: defaults
      summary: "List the pets\nin the store"
      description: All of them.
      x-mcp-resource: true
      responses:
        '200': {description: ok, content: {text/plain: {schema: {type: string}}, application/json: {schema: {type: object}}}}
  /bare:
    get: {operationId: bare, x-mcp-resource: true, `+okResponse+`}
  /text:
    get:
      operationId: text
      x-mcp-resource: true
      responses:
        '204': {description: none}
        '201': {description: ok, content: {text/csv: {schema: {type: string}}, text/plain: {schema: {type: string}}}}
        '202': {description: ok, content: {application/json: {schema: {type: object}}}}
  /wild:
    get:
      operationId: wild
      x-mcp-resource: true
      responses:
        '200': {description: ok, content: {'*/*': {schema: {type: string}}}}
  /explicit:
    get:
      operationId: explicit
      summary: Ignored
      x-mcp-resource:
        name: Pets
        title: All pets
        description: Every pet, by name.
        mimeType: application/x-ndjson
        pollInterval: 10s
        color: blue
      `+okResponse+`
  /seconds:
    get: {operationId: seconds, x-mcp-resource: {pollInterval: 30}, `+okResponse+`}
  /fraction:
    get: {operationId: fraction, x-mcp-resource: {pollInterval: 1.5}, `+okResponse+`}
`, Options{})

	d := resource(t, set, "defaults")
	require.Equal(t, "defaults", d.Name)
	require.Equal(t, "List the pets", d.Title, "the summary's first line")
	require.Equal(t, tool(t, set, "defaults").Description, d.Description)
	require.Equal(t, "application/json", d.MIMEType, "application/json is preferred")
	require.Zero(t, d.PollInterval)

	b := resource(t, set, "bare")
	require.Empty(t, b.Title, "no summary, no title")
	require.Equal(t, "GET /bare", b.Description)
	require.Empty(t, b.MIMEType)

	require.Equal(t, "text/csv", resource(t, set, "text").MIMEType, "201 before 202; the first media type")
	require.Empty(t, resource(t, set, "wild").MIMEType)

	e := resource(t, set, "explicit")
	require.Equal(t, "Pets", e.Name)
	require.Equal(t, "All pets", e.Title)
	require.Equal(t, "Every pet, by name.", e.Description)
	require.Equal(t, "application/x-ndjson", e.MIMEType)
	require.Equal(t, 10*time.Second, e.PollInterval)
	requireWarning(t, set, "paths./explicit.get", `x-mcp-resource has no field "color"; ignored`)

	require.Equal(t, 30*time.Second, resource(t, set, "seconds").PollInterval)
	require.Equal(t, 1500*time.Millisecond, resource(t, set, "fraction").PollInterval)
}

func TestResourceValues(t *testing.T) {
	set := genYAML(t, `
  /pets/{kind}/{id}/{name}:
    get:
      operationId: simple
      x-mcp-resource: true
      parameters:
        - {name: kind, in: path, required: true, schema: {type: string, enum: [cat, dog, a/b, '..']}, examples: {b: {value: bird}, a: {value: cat}, c: {value: dog}}}
        - {name: id, in: path, required: true, schema: {type: integer, example: 7}, example: 42}
        - {name: name, in: path, required: true, schema: {type: string}}
      `+okResponse+`
  /files/{path}:
    get:
      operationId: reserved
      x-mcp-resource: {uri: 'files:///{+path}'}
      parameters:
        - {name: path, in: path, required: true, schema: {type: string, enum: [a/b.txt, c.txt, c.txt]}}
      `+okResponse+`
  /flags/{on}:
    get:
      operationId: flags
      x-mcp-resource: true
      parameters:
        - {name: on, in: path, required: true, schema: {type: boolean, enum: [true, false]}}
      `+okResponse+`
`, Options{})
	require.Equal(t, map[string][]string{
		"kind": {"cat", "dog", "bird"},
		"id":   {"42", "7"},
	}, resource(t, set, "simple").Values, "enum, example, examples by key, schema example; deduplicated; no value a segment cannot hold; no entry without values")
	require.Equal(t, map[string][]string{"path": {"a/b.txt", "c.txt"}}, resource(t, set, "reserved").Values, "{+path} takes slashes")
	require.Equal(t, map[string][]string{"on": {"true", "false"}}, resource(t, set, "flags").Values)
}
