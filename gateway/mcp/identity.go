package mcp

// Identity names the caller for limits that must survive session cycling
// (per-client rate limits, session caps, quotas): the principal's subject
// when authenticated, else the client address (or the identity header a
// trusted proxy sets, as the transport filled Client).
func (r *Request) Identity() string {
	if r.Principal != nil {
		return "sub:" + r.Principal.Subject
	}
	return "addr:" + r.Client
}
