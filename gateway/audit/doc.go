// Package audit is the gateway's audit log: one JSON line per tools/call,
// saying who called which tool with which arguments and how it ended.
//
// Record is on the call path and never blocks: an entry goes into a bounded
// queue, and when the queue is full it is dropped and counted
// (mcpgw_audit_dropped_total), with a warning at most once a second. A
// single goroutine, owned by the Writer and joined by Close, redacts,
// encodes and writes the entries through a buffer that is flushed whenever
// the queue runs empty, so lines appear promptly under light load and are
// batched under heavy load. Each write to the destination holds whole
// lines, however long: a line never shares a write with part of another,
// so lines are not interleaved even when the destination is the stdout or
// stderr the process also logs to.
//
// # Line format
//
// Every line is one JSON object terminated by '\n', fields in this order
// (those marked * are left out when empty or zero):
//
//	time            RFC 3339 with nanoseconds, UTC
//	replica*        the replica that served the call (Config.Replica)
//	era*            protocol revision or era of the request
//	session*        HashSession of the session id, never the id itself
//	principal*      the authenticated subject
//	client*         the client's identity (address or subject)
//	tool            the tool called
//	outcome         ok | tool_error | denied | error | cancelled
//	reason*         why a call was denied (Reason* constants)
//	detail*         a short qualifier: the scope or quota name
//	backend_status* the REST backend's HTTP status; absent without a call
//	duration_ms     time to answer, in milliseconds, to the microsecond
//	arguments*      the call's arguments, redacted
//
// The arguments come last so that the short fields of a line stay readable.
// String fields are JSON-escaped (control characters included) and cut to
// MaxField bytes.
//
// # Arguments
//
// The value of every object member whose key matches the redact list
// (Config.Redact, DefaultRedact) becomes "[REDACTED]", at any depth, in
// objects and in arrays; other members are kept, in their order, as are
// duplicate members. Keys are compared after lowercasing and removing
// everything but letters and digits, so "api_key", "X-Api-Key" and "apiKey"
// all match "apikey"; see DefaultRedact for the default list. Space is
// dropped and invalid UTF-8 becomes U+FFFD; otherwise strings keep their
// escapes or are re-escaped as encoding/json does. Arguments
// longer than MaxArguments bytes are not recorded: the line carries
// {"_truncated":true,"bytes":N} instead, with N the size of the arguments
// (a prefix would be invalid JSON and could hold half a secret). Arguments
// that are not valid JSON become {"_invalid":true,"bytes":N}; the raw bytes
// are never written.
//
// # Destination
//
// A file is opened with O_APPEND|O_CREATE|O_WRONLY and mode 0600 (an
// existing file keeps its mode; a warning is logged when others may read
// it). Append mode makes logrotate's copytruncate safe: after the truncate
// the next write goes to the new end of the file. The file is not reopened
// on SIGHUP.
//
// It imports only the standard library, client_golang and internal/lograte;
// it must not import package gateway or a feature package: the gateway
// calls it, never the other way round.
package audit
