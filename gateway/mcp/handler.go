package mcp

// Handler answers one JSON-RPC request with a result (encoded as the
// response's result member) or an error. An *Error chooses the code the
// client sees; ErrCancelled means no answer at all; any other error is an
// internal error, logged once by the transport.
type Handler func(r *Request) (result any, err error)

// Middleware wraps a Handler. Every JSON-RPC request of either era,
// batch members included, passes through the server's middleware chain
// before its handler: the place for authentication, authorization, limits
// and audit. A middleware may change r (its Principal, say) before calling
// next, answer without calling next, or look at next's outcome.
//
// A result may hold a buffer that is reused once the response is written
// (a tools/call result is a *PooledResult); a middleware that keeps
// anything of it past its own return must take a copy (PooledResult.Copy).
type Middleware func(next Handler) Handler

// Chain applies mws to h so that the first listed runs first.
func Chain(h Handler, mws ...Middleware) Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}

// Router is where a feature registers its methods: the server's method
// table. eras says in which protocol families the method exists; elsewhere
// it is "method not found".
type Router interface {
	Handle(method string, eras Era, h Handler)
}
