package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// method is one entry of the dispatch table.
type method struct {
	// handle answers a request with a result or an error.
	handle func(s *Server, r *request) (any, error)
	// stream, when set, owns the whole HTTP exchange (long-lived streams).
	stream func(s *Server, w http.ResponseWriter, hr *http.Request, r *request)
	// eras that know the method; elsewhere it is "method not found".
	eras era
}

// methods is the dispatch table. initialize is handled by the transport
// because it creates the session the table's handlers run in.
var methods map[string]method

func init() {
	methods = map[string]method{
		"ping":                     {handle: (*Server).ping, eras: eraSession},
		"logging/setLevel":         {handle: (*Server).setLogLevel, eras: eraSession},
		"server/discover":          {handle: (*Server).discover, eras: eraStateless},
		"subscriptions/listen":     {stream: (*Server).listen, eras: eraStateless},
		"tools/list":               {handle: (*Server).listTools, eras: eraBoth},
		"tools/call":               {handle: (*Server).callTool, eras: eraBoth},
		"resources/list":           {handle: (*Server).listResources, eras: eraBoth},
		"resources/templates/list": {handle: (*Server).listResourceTemplates, eras: eraBoth},
		"resources/read":           {handle: (*Server).readResource, eras: eraBoth},
		"prompts/list":             {handle: (*Server).listPrompts, eras: eraBoth},
		"prompts/get":              {handle: (*Server).getPrompt, eras: eraBoth},
		"completion/complete":      {handle: (*Server).complete, eras: eraBoth},
	}
	for name := range methods {
		knownMethods[name] = name
	}
	for _, name := range []string{"initialize", "notifications/initialized", "notifications/cancelled"} {
		knownMethods[name] = name
	}
}

// errCancelled tells dispatch that the request was cancelled and must not be
// answered.
var errCancelled = errors.New("request cancelled")

// dispatch runs a handler and hands its outcome to the replier. All error
// mapping to JSON-RPC happens here (via reportError).
func (s *Server) dispatch(r *request, m method, out replier) {
	start := time.Now()
	res, err := m.handle(s, r)
	// Session requests are cancelled through their call context (callTool
	// returns errCancelled); a stateless request's context is the HTTP
	// request's, which ends when the client goes away.
	if err != nil && (errors.Is(err, errCancelled) || errors.Is(r.ctx.Err(), context.Canceled)) {
		s.metrics.observe(r, "cancelled", start)
		out.cancelled()
		return
	}
	if err != nil {
		s.metrics.observe(r, "error", start)
		out.finish(r.id, nil, s.reportError(r.ctx, r.method, err))
		return
	}
	s.metrics.observe(r, "ok", start)
	out.finish(r.id, res, nil)
}

// reportError maps a handler error to what the client sees; internal errors
// are logged with their text and reach the client only as "Internal error".
func (s *Server) reportError(ctx context.Context, method string, err error) *rpcError {
	rerr, internal := asRPCError(err)
	if internal {
		s.log.ErrorContext(ctx, "request failed", "method", method, "err", err)
	}
	return rerr
}

// decodeParams decodes params into v; a failure is -32602 naming the method.
func decodeParams(r *request, v any) error {
	if len(r.params) == 0 {
		return nil
	}
	if err := json.Unmarshal(r.params, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return errInvalidParams("Invalid params for %s: %q must be %s", r.method, te.Field, jsonTypeName(te.Type.Kind().String()))
		}
		return errInvalidParams("Invalid params for %s: params must be an object", r.method)
	}
	return nil
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	case "bool":
		return "a boolean"
	case "int", "int64", "float64", "uint64":
		return "a number"
	}
	return "of another type"
}
