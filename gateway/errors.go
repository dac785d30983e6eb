package gateway

// One error path. Transport steps and handlers return errors; translate is
// the only place that turns an error into what the client sees (an HTTP
// status and a JSON-RPC error) and the only place that logs a failure the
// client does not see the text of. Nothing else builds a JSON-RPC error
// body for a failure of the stores.
//
//	*mcp.Error                   as it says (Status 0: 200 inside a response)
//	sessions.ErrNotFound         404, -32001 session not found
//	sessions.ErrUnavailable      503, -32003 session store unavailable (logged)
//	errBusUnavailable            503, -32003 message bus unavailable (logged)
//	anything else                -32603 Internal error (logged with its text)
//
// Store call sites wrap what the store returns with storeError, so that a
// store failure is a 503 whatever its text.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/sessions"
)

// errBusUnavailable marks a failure of the message bus; wrap the bus's
// error with it (busError).
var errBusUnavailable = errors.New("message bus unavailable")

func busError(err error) error { return fmt.Errorf("%w: %w", errBusUnavailable, err) }

// reject is a transport rejection: an HTTP status with a JSON-RPC error.
func reject(status, code int, format string, args ...any) *mcp.Error {
	return mcp.NewError(code, format, args...).WithStatus(status)
}

// errSessionNotFound is the one answer to a session that does not exist,
// ended or expired.
func errSessionNotFound() *mcp.Error {
	return reject(http.StatusNotFound, mcp.CodeSessionNotFound, "Session not found: it ended or expired; send initialize to start a new one")
}

func errStoreUnavailable() *mcp.Error {
	return reject(http.StatusServiceUnavailable, mcp.CodeUnavailable, "Service Unavailable: the session store is unavailable")
}

func errBusDown() *mcp.Error {
	return reject(http.StatusServiceUnavailable, mcp.CodeUnavailable, "Service Unavailable: the message bus is unavailable")
}

// translate maps err to the JSON-RPC error the client sees (whose Status is
// the HTTP status when the error is the whole response), logging what the
// client must not see. what names the request for the log.
func (s *Server) translate(ctx context.Context, what string, err error) *mcp.Error {
	rerr, logMsg, limited := rpcError(err)
	switch {
	case logMsg == "":
	case limited:
		s.logLimited(ctx, slog.LevelError, logMsg, "request", what, "err", err)
	default:
		s.log.ErrorContext(ctx, logMsg, "request", what, "err", err)
	}
	return rerr
}

// rpcError is translate without the logging, for those that only need the
// code (a span): the error, what the log says of it ("" for nothing), and
// whether that line is rate limited (a failing dependency repeats it on
// every request).
func rpcError(err error) (rerr *mcp.Error, logMsg string, limited bool) {
	switch {
	case errors.As(err, &rerr):
		return rerr, "", false
	case errors.Is(err, sessions.ErrNotFound):
		return errSessionNotFound(), "", false
	case errors.Is(err, sessions.ErrUnavailable):
		return errStoreUnavailable(), "session store failed", true
	case errors.Is(err, errBusUnavailable):
		return errBusDown(), "message bus failed", true
	}
	return mcp.InternalError(), "request failed", false
}

// storeError marks a session store failure as the store being
// unavailable (503), whatever the store said, except that the session is
// gone (404). Every call site that talks to the store passes its error
// through it, so a store returning plain errors still gets a 503.
func storeError(err error) error {
	if err == nil || errors.Is(err, sessions.ErrNotFound) || errors.Is(err, sessions.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", sessions.ErrUnavailable, err)
}

// fail answers a whole HTTP exchange with err: the status translate picks,
// else 400 for a rejection that names none and 500 for an internal error,
// with an id-less or id-carrying JSON-RPC error body.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, id []byte, err error) {
	rerr := s.translate(r.Context(), r.Method+" "+r.URL.Path, err)
	status := rerr.Status
	setErrorHeaders(w, rerr)
	switch {
	case status != 0:
	case rerr.Code == mcp.CodeInternalError:
		status = http.StatusInternalServerError
	default:
		status = http.StatusBadRequest
	}
	writeJSON(w, status, mcp.Response{JSONRPC: "2.0", ID: id, Error: rerr})
}
