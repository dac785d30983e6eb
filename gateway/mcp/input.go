package mcp

import "encoding/json"

// Input the server needs from the client in the middle of a request: the
// 2026-07-28 MRTR vocabulary (inputRequests / inputResponses), which the
// gateway also uses for the session era's in-band server→client requests.

// Methods a server may ask the client to run.
const (
	MethodElicit     = "elicitation/create"
	MethodSample     = "sampling/createMessage"
	MethodListRoots  = "roots/list"
	maxInputRequests = 32
)

// MaxInputRequests bounds the entries of one round of input requests.
const MaxInputRequests = maxInputRequests

// InputRequest is one entry of inputRequests: a bare server→client request
// (no jsonrpc, no id).
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// InputRequests are keyed by names the server chooses, unique per round.
type InputRequests map[string]InputRequest

// InputResponses are the client's answers (ElicitResult,
// CreateMessageResult, ListRootsResult), by the same keys.
type InputResponses map[string]json.RawMessage

// CapabilityFor names the client capability a server→client method needs
// ("elicitation", "sampling", "roots"); "" for a method that is not one.
func CapabilityFor(method string) string {
	switch method {
	case MethodElicit:
		return "elicitation"
	case MethodSample:
		return "sampling"
	case MethodListRoots:
		return "roots"
	}
	return ""
}

// Messenger is a Sink that also carries whole JSON-RPC messages on the
// request's stream: the session era's server→client requests travel on
// the POST stream of the request they belong to.
type Messenger interface {
	Sink
	// Send writes one encoded JSON-RPC message; an error means it did not
	// reach the stream (the client is gone, the request has answered).
	Send(msg []byte) error
}
