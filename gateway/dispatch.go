package gateway

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

// method is one entry of the server's dispatch table.
type method struct {
	// handle answers a request: the method's handler inside the server's
	// middleware chain.
	handle mcp.Handler
	// stream, when set, owns the whole HTTP exchange (long-lived streams);
	// handle then only admits the request through the middleware chain.
	stream func(s *Server, w http.ResponseWriter, hr *http.Request, r *mcp.Request)
	// eras that know the method; elsewhere it is "method not found".
	eras mcp.Era
	// series are the method's request metrics.
	series *methodSeries
}

// handle adds a method to the table, wrapped in the server's middleware
// chain. Only New registers (the server's own methods and, through router,
// the features'), so the table is read-only once the server serves.
func (s *Server) handle(name string, eras mcp.Era, h mcp.Handler) {
	s.register(name, method{handle: mcp.Chain(h, s.middleware...), eras: eras})
}

func (s *Server) register(name string, m method) {
	if _, dup := s.methods[name]; dup {
		panic("gateway: method " + name + " registered twice")
	}
	m.series = newMethodSeries(s.metrics, name)
	s.methods[name] = m
}

// router is the mcp.Router New hands the features: the table, without
// making registration part of Server's API.
type router struct{ s *Server }

var _ mcp.Router = router{}

func (r router) Handle(name string, eras mcp.Era, h mcp.Handler) { r.s.handle(name, eras, h) }

// handleStream adds a method whose handler owns the HTTP exchange. The
// middleware chain still sees the request: the stream starts only if the
// chain lets it through to the admitting handler.
func (s *Server) handleStream(name string, eras mcp.Era, stream func(*Server, http.ResponseWriter, *http.Request, *mcp.Request)) {
	s.register(name, method{handle: mcp.Chain(admitStream, s.middleware...), stream: stream, eras: eras})
}

// streamAdmitted is the outcome of a stream request the chain let through:
// the request as the chain handed it to the handler.
type streamAdmitted struct{ r *mcp.Request }

func admitStream(r *mcp.Request) (any, error) { return streamAdmitted{r}, nil }

// registerOwn adds the methods the server answers itself: the session and
// discovery plumbing that belongs to no feature.
func (s *Server) registerOwn() {
	s.handle("initialize", mcp.EraSession, s.initialize)
	s.handle("ping", mcp.EraSession, s.ping)
	s.handle("logging/setLevel", mcp.EraSession, s.setLogLevel)
	s.handle("server/discover", mcp.EraStateless, s.discover)
	s.handleStream("subscriptions/listen", mcp.EraStateless, (*Server).listen)
}

// lookup returns the table entry serving name in era.
func (s *Server) lookup(name string, era mcp.Era) (method, bool) {
	m, ok := s.methods[name]
	if !ok || m.eras&era == 0 {
		return method{}, false
	}
	return m, true
}

// methodNotFound answers a method the gateway does not serve in the
// request's era: 200 with -32601 in a session, 404 in the stateless era.
func methodNotFound(r *mcp.Request) (any, error) {
	err := mcp.NewError(mcp.CodeMethodNotFound, "Method not found: %s", r.Method)
	if r.Era == mcp.EraStateless {
		err.WithStatus(http.StatusNotFound)
	}
	return nil, err
}

// dispatch runs a handler (already inside the middleware chain) and hands
// its outcome to the replier. All error mapping to JSON-RPC happens in
// translate.
func (s *Server) dispatch(r *mcp.Request, h mcp.Handler, out replier) {
	start := time.Now()
	res, err := s.traced(r, h)
	// Session requests are cancelled through their call context (handlers
	// return mcp.ErrCancelled); a stateless request's context is the HTTP
	// request's, which ends when the client goes away.
	if err != nil && (errors.Is(err, mcp.ErrCancelled) || errors.Is(r.Ctx.Err(), context.Canceled)) {
		s.metrics.observe(s, r, reqCancelled, start)
		out.cancelled()
		return
	}
	if err != nil {
		s.metrics.observe(s, r, reqError, start)
		out.finish(r.ID, nil, s.translate(r.Ctx, r.Method, err))
		return
	}
	s.metrics.observe(s, r, reqOK, start)
	out.finish(r.ID, res, nil)
}
