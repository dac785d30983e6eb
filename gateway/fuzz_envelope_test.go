package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/http/httpguts"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/sessions"
)

// fuzzStatuses are the statuses the transport documents; 500 is not one:
// nothing a client sends is an internal error.
var fuzzStatuses = map[int]bool{200: true, 202: true, 400: true, 401: true, 403: true, 404: true, 405: true,
	406: true, 408: true, 413: true, 415: true, 429: true, 503: true}

// fuzzMode picks, bit by bit, where a fuzzed body goes and with which
// headers.
const (
	fuzzSessionMask  = 0b11                   // 0 none, 1 a 2025-11-25 session, 2 a 2025-03-26 one, 3 the fuzzed id
	fuzzLegacy       = 1 << 2                 // POST to the 2024-11-05 messages endpoint (0: its session)
	fuzzVersion      = 1 << 3                 // send MCP-Protocol-Version: version
	fuzzMethod       = 1 << 4                 // send Mcp-Method: method
	fuzzName         = 1 << 5                 // send Mcp-Name: name
	fuzzBadType      = 1 << 6                 // Content-Type: text/plain
	fuzzJSONOnly     = 1 << 7                 // Accept: application/json
	fuzzAnswerWithin = 100 * time.Millisecond // a request still running then (a stream) is cut off
)

// Any bytes POSTed with any of the MCP headers, in or out of a session of
// either era or of the 2024-11-05 transport, to the whole HTTP handler: it
// never panics, answers a documented status (never 500), a JSON-RPC 2.0
// body or events of them, and nothing from the needle table that the
// input did not bring. The body also goes to decodeMessage, which must
// agree with encoding/json on what is JSON.
func FuzzJSONRPCEnvelope(f *testing.F) {
	backend := httptest.NewServer(leakBackend())
	f.Cleanup(backend.Close)
	store := sessions.NewMemory(sessions.Limits{TTL: time.Hour, MaxEvents: 100})
	callCfg := leakCaller(backend.URL)
	// The redaction gaps TestNoInternalDetailReachesClients pins (a query
	// key with a space, a cookie key with a comma) would fail every echo:
	// here the keys are ones the redaction knows every form of.
	callCfg.APIKeys = map[string]string{"key": leakHeaderKey, "qkey": "sekret-query-key-789", "ckey": "sekret-cookie-key-321"}
	callCfg.Timeout = 2 * time.Second
	callCfg.ToolTimeouts = map[string]time.Duration{"slow": 20 * time.Millisecond}
	srv := newLeakServer(f, Config{MaxBodyBytes: 64 << 10, MaxBatch: 5, MaxSessionsPerClient: 500}, Deps{Store: store},
		[]byte(leakDoc), callCfg)
	h := srv.Handler(nil)
	needles := leakNeedles(backend.URL)
	for _, v := range callCfg.APIKeys {
		needles = append(needles, secretForms("a backend API key", v)...)
	}
	check := newLeakChecker(needles...)

	open := func(version string) string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, fuzzRequest("/mcp", []byte(initBody(version)), nil))
		require.Equal(f, http.StatusOK, rec.Code, "%s", rec.Body)
		return rec.Header().Get(headerSessionID)
	}
	s25, s0325 := open("2025-11-25"), open("2025-03-26")
	now := time.Now()
	legacy := &sessions.Session{ID: newSessionID(), Transport: sessions.TransportSSE, ProtocolVersion: Version20241105,
		Initialized: true, Client: "addr:192.0.2.1", CreatedAt: now, LastSeen: now}
	require.NoError(f, store.Create(context.Background(), legacy))

	for _, s := range fuzzSeeds(s25) {
		f.Add([]byte(s.body), s.mode, s.sid, s.version, s.method, s.name)
	}
	f.Fuzz(func(t *testing.T, body []byte, mode uint8, sid, version, method, name string) {
		checkDecodeMessage(t, body)

		headers := map[string]string{}
		set := func(k, v string) bool {
			v = strings.Trim(v, " \t") // as net/http reads header values
			if !httpguts.ValidHeaderFieldValue(v) {
				return false
			}
			if v != "" {
				headers[k] = v
			}
			return true
		}
		chosen := [4]string{"", s25, s0325, sid}[mode&fuzzSessionMask]
		path := "/mcp"
		if mode&fuzzLegacy != 0 {
			if chosen == "" {
				chosen = legacy.ID
			}
			path = "/mcp/messages?sessionId=" + url.QueryEscape(chosen)
		} else if !set(headerSessionID, chosen) {
			return
		}
		if mode&fuzzVersion != 0 && !set(headerProtocolVersion, version) ||
			mode&fuzzMethod != 0 && !set(headerMethod, method) ||
			mode&fuzzName != 0 && !set(headerName, name) {
			return // no HTTP server would deliver it
		}
		if mode&fuzzBadType != 0 {
			headers["Content-Type"] = "text/plain"
		}
		if mode&fuzzJSONOnly != 0 {
			headers["Accept"] = "application/json"
		}

		ctx, cancel := context.WithTimeout(context.Background(), fuzzAnswerWithin)
		defer cancel()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, fuzzRequest(path, body, headers).WithContext(ctx))
		cutOff := ctx.Err() != nil
		res := reply{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}

		if !fuzzStatuses[res.status] {
			t.Fatalf("status %d for %s: %s", res.status, path, res.body)
		}
		input := echoable(append([]string{string(body), path}, mapValues(headers)...)...)
		excused := func(n needle) bool { return strings.Contains(input, n.value) }
		for _, part := range append([][]byte{res.body}, headerLines(res.header)...) {
			if n, i, ok := check.find(part, excused); ok {
				t.Fatalf("LEAK: %s (%q) in %s: …%s…", n.name, n.value, path, excerptAround(part, i, len(n.value)))
			}
			for _, s := range decodedStrings(part) {
				if n, i, ok := check.find([]byte(s), excused); ok {
					t.Fatalf("LEAK once decoded: %s (%q) in %s: …%s…", n.name, n.value, path, excerptAround([]byte(s), i, len(n.value)))
				}
			}
		}
		isStream := strings.HasPrefix(res.header.Get("Content-Type"), "text/event-stream")
		if res.status == http.StatusAccepted || cutOff && !isStream {
			return
		}
		checkJSONRPCAnswer(t, res)
	})
}

// fuzzRequest is a POST as the HTTP server hands it over, from a loopback
// Host.
func fuzzRequest(path string, body []byte, headers map[string]string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Host = "127.0.0.1"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return req
}

// checkJSONRPCAnswer requires a JSON-RPC 2.0 answer: one message, a batch
// of them, or SSE events each carrying one.
func checkJSONRPCAnswer(t *testing.T, r reply) {
	t.Helper()
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		events := sseData(r.body)
		if len(events) == 0 {
			t.Fatalf("status %d: an event stream without events: %q", r.status, r.body)
		}
		for _, ev := range events {
			checkJSONRPCMessage(t, ev, true)
		}
		return
	}
	if !json.Valid(r.body) {
		t.Fatalf("status %d: body is not JSON: %q", r.status, r.body)
	}
	if isArray(r.body) {
		var batch []json.RawMessage
		if err := json.Unmarshal(r.body, &batch); err != nil || len(batch) == 0 {
			t.Fatalf("status %d: not a batch answer: %s", r.status, r.body)
		}
		for _, m := range batch {
			checkJSONRPCMessage(t, m, false)
		}
		return
	}
	checkJSONRPCMessage(t, r.body, false)
}

// checkJSONRPCMessage requires a response (result, or an error with a
// numeric code and a message) or, on a stream, a notification.
func checkJSONRPCMessage(t *testing.T, raw []byte, onStream bool) {
	t.Helper()
	var m struct {
		JSONRPC *string          `json:"jsonrpc"`
		Method  *string          `json:"method"`
		Result  *json.RawMessage `json:"result"`
		Error   *struct {
			Code    *json.Number `json:"code"`
			Message *string      `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON-RPC message: %v: %s", err, raw)
	}
	switch {
	case m.JSONRPC == nil || *m.JSONRPC != "2.0":
		t.Fatalf(`no "jsonrpc":"2.0": %s`, raw)
	case onStream && m.Method != nil:
	case m.Error != nil:
		if m.Error.Code == nil || m.Error.Message == nil {
			t.Fatalf("an error without a code or a message: %s", raw)
		}
		if _, err := strconv.Atoi(m.Error.Code.String()); err != nil {
			t.Fatalf("an error code that is not an integer: %s", raw)
		}
		if *m.Error.Code == json.Number(strconv.Itoa(mcp.CodeInternalError)) {
			t.Fatalf("an internal error for client input: %s", raw)
		}
	case m.Result == nil:
		t.Fatalf("neither result nor error: %s", raw)
	}
}

// checkDecodeMessage holds decodeMessage to encoding/json: what is not JSON
// is a parse error and only that is; what it accepts, encoding/json
// accepts as a 2.0 message; what encoding/json refuses, it refuses.
func checkDecodeMessage(t *testing.T, raw []byte) {
	t.Helper()
	m, perr := decodeMessage(raw)
	valid := json.Valid(raw)
	switch {
	case perr == nil && !valid:
		t.Fatalf("decodeMessage accepted what is not JSON: %q", raw)
	case perr != nil && (perr.Code == mcp.CodeParseError) == valid:
		t.Fatalf("decodeMessage: code %d, encoding/json says valid=%v: %q", perr.Code, valid, raw)
	case perr != nil && perr.Status != http.StatusBadRequest:
		t.Fatalf("decodeMessage: status %d: %q", perr.Status, raw)
	case perr == nil && m.Method == "" && m.ID == nil:
		t.Fatalf("decodeMessage accepted a message with neither method nor id: %q", raw)
	}
	if !exactEnvelopeNames(raw) {
		return // encoding/json matches member names case-insensitively; decodeMessage does not
	}
	std := stdlibEnvelopeCode(raw)
	switch {
	case perr == nil && std != 0:
		t.Fatalf("decodeMessage accepted what encoding/json refuses (%d): %q", std, raw)
	case std != 0 && perr.Code != std:
		t.Fatalf("decodeMessage: code %d, encoding/json %d: %q", perr.Code, std, raw)
	}
}

// exactEnvelopeNames reports whether no top-level member name of raw
// matches jsonrpc, method or id only when case is ignored.
func exactEnvelopeNames(raw []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return true
	}
	for k := range top {
		for _, name := range []string{"jsonrpc", "method", "id"} {
			if k != name && strings.EqualFold(k, name) {
				return false
			}
		}
	}
	return true
}

// echoable is what of the input an answer may quote, lower-cased: each
// part as sent and with its JSON escapes undone.
func echoable(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(strings.ToLower(p))
		b.WriteByte(0)
		b.WriteString(strings.ToLower(unescapeJSONish(p)))
		b.WriteByte(0)
	}
	return b.String()
}

// unescapeJSONish undoes every JSON escape in s, wherever it stands.
func unescapeJSONish(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'u':
			if i+4 < len(s) {
				if v, err := strconv.ParseUint(s[i+1:i+5], 16, 32); err == nil {
					b.WriteRune(rune(v))
					i += 4
					continue
				}
			}
			b.WriteString(`\u`)
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b', 'f':
		default:
			b.WriteByte(c)
		}
	}
	if !utf8.ValidString(b.String()) {
		return strings.ToValidUTF8(b.String(), "\uFFFD")
	}
	return b.String()
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func headerLines(h http.Header) [][]byte {
	var out [][]byte
	for k, vs := range h {
		for _, v := range vs {
			out = append(out, []byte(k+": "+v))
		}
	}
	return out
}

type fuzzSeed struct {
	body                       string
	mode                       uint8
	sid, version, method, name string
}

// fuzzSeeds are valid requests of every era, batches, notifications and
// the envelope's edge cases.
func fuzzSeeds(sid string) []fuzzSeed {
	const s25, s0325, fuzzed = 1, 2, 3
	stateless := uint8(fuzzVersion | fuzzMethod)
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	seeds := []fuzzSeed{
		{body: initBody("2025-11-25")},
		{body: initBody("2025-03-26")},
		{body: initBody("2024-11-05"), mode: fuzzLegacy},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, mode: s25},
		{body: `{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"cursor":"abc"}}`, mode: s25},
		{body: toolCall(2, "echoRequest", `{}`), mode: s25},
		{body: toolCall(3, "boom", `{}`), mode: s25},
		{body: toolCall(4, "denied", `{}`), mode: s0325},
		{body: toolCall(5, "getItem", `{"id":"x"}`), mode: s25},
		{body: toolCall(6, "addItem", `{"body":{"name":"n","count":1}}`), mode: s25},
		{body: toolCall(7, "slow", `{}`), mode: s25},
		{body: `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"boom","arguments":{},"_meta":{"progressToken":1}}}`, mode: s25},
		{body: `{"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"level":"debug"}}`, mode: s25},
		{body: `{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"x:y"}}`, mode: s25},
		{body: `{"jsonrpc":"2.0","id":11,"method":"prompts/get","params":{"name":"p"}}`, mode: s25},
		{body: `{"jsonrpc":"2.0","id":12,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"b"}}}`, mode: s25},
		{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, mode: s25},
		{body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, mode: s25},
		{body: `{"jsonrpc":"2.0","id":13,"result":{}}`, mode: s25},
		{body: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},` + toolCall(2, "boom", `{}`) + `]`, mode: s0325},
		{body: `[1,"x",null,{},[]]`, mode: s0325},
		{body: `[]`, mode: s0325},
		{body: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, mode: s25},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, mode: fuzzed, sid: strings.Repeat("A", 43)},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, mode: fuzzed | fuzzVersion, sid: sid, version: "2025-06-18"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, mode: s25 | fuzzVersion, version: "1999-01-01"},
		{body: modernBody(1, "tools/list", ""), mode: stateless, version: "2026-07-28", method: "tools/list"},
		{body: modernBody(2, "tools/call", `"name":"echoRequest","arguments":{}`), mode: stateless | fuzzName, version: "2026-07-28", method: "tools/call", name: "echoRequest"},
		{body: modernBody(3, "tools/call", `"name":"boom","arguments":{}`), mode: stateless | fuzzName, version: "2026-07-28", method: "tools/call", name: "=?base64?Ym9vbQ==?="},
		{body: modernBody(4, "resources/read", `"uri":"x:y"`), mode: stateless | fuzzName, version: "2026-07-28", method: "resources/read", name: "x:y"},
		{body: modernBody(5, "server/discover", ""), mode: stateless, version: "2026-07-28", method: "server/discover"},
		{body: modernBody(6, "subscriptions/listen", `"filter":{}`), mode: stateless, version: "2026-07-28", method: "subscriptions/listen"},
		{body: modernBody(6, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`), mode: stateless, version: "2026-07-28", method: "subscriptions/listen"},
		{body: strings.Replace(modernBody(7, "tools/list", ""), `"_meta":{`, `"_meta":{"io.modelcontextprotocol/logLevel":"nope",`, 1), mode: stateless, version: "2026-07-28", method: "tools/list"},
		{body: `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`, mode: stateless, version: "2026-07-28", method: "tools/list"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, mode: fuzzLegacy},
		{body: toolCall(2, "echoRequest", `{}`), mode: fuzzLegacy},
		{body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`, mode: fuzzLegacy},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, mode: fuzzLegacy | s25},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, mode: s25 | fuzzBadType},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, mode: s25 | fuzzJSONOnly},
		{body: `{"jsonrpc":"2.0","id":` + strings.Repeat("9", 400) + `,"method":"ping"}`, mode: s25},
		{body: `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, mode: s25},
		{body: `{"jsonrpc":"2.0","id":-0.0e-0,"method":"ping"}`, mode: s25},
		{body: "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\xfe\",\"method\":\"ping\"}", mode: s25},
		{body: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}", mode: s25},
		{body: `{"jsonrpc":"2\u002e0","id":1,"method":"\u0070ing"}`, mode: s25},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + deep[:2000] + `}`, mode: s25},
		{body: deep},
		{body: `{"a":` + deep + `}`},
		{body: `{"jsonrpc":"2.0","JSONRPC":"1.0","id":1,"Method":"x","method":"ping"}`, mode: s25},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping","method":null}`, mode: s25},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"} trailing`, mode: s25},
		{body: ` {"jsonrpc":"2.0","id":1,"method":"ping"} `, mode: s25},
		{body: "\ufeff{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", mode: s25},
		{body: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, mode: s25},
		{body: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}`, mode: s25},
		{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":[],"clientInfo":"x"}}`},
		{body: `null`}, {body: `"x"`}, {body: ``}, {body: `{`},
	}
	return seeds
}
