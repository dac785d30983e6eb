package call

import "encoding/json"

// Stage is a step of one backend exchange. The fixed stages (StageSent,
// StageAnswered, StageMapped) are numbered in the order they happen and
// each comes at most once per call; the backend's own reports
// (StageBackendProgress, StageBackendLog, StagePolling) come between
// StageAnswered and StageMapped, any number of times.
type Stage int

const (
	// StageSent: the arguments were valid and the request has been sent.
	StageSent Stage = iota + 1
	// StageAnswered: the backend's status line and headers arrived.
	StageAnswered
	// StageMapped: the response was read and mapped to a result (or to a
	// request for input, see InputRequired).
	StageMapped

	// StageBackendProgress: an event stream (text/event-stream) sent a
	// progress event. Done is the progress, which only grows within a call
	// (smaller or equal values are not reported); Total is the total when
	// the backend gave one (0: unknown); Message is its text, sanitized.
	StageBackendProgress
	// StageBackendLog: an event stream sent a log event. Level is one of
	// the eight MCP log levels ("info" when the backend gave another),
	// Logger its logger name (may be empty), Data its data, valid JSON
	// with the gateway's credentials redacted.
	StageBackendLog
	// StagePolling: the operation runs asynchronously (202 Accepted) and
	// was still running when last asked. Polls is how many status polls
	// were made so far (0 for the 202 that started it); Done, Total and
	// Message are what the status body reported as progress, total and
	// message, or zero (Done never decreases within a call).
	StagePolling
)

// StageCount is the number of fixed stages a successful exchange goes
// through; the backend's own reports are not counted.
const StageCount = int(StageMapped)

// Progress reports one stage of a call. Status is the backend's HTTP
// status from StageAnswered on (for StagePolling, that of the last status
// poll). The other fields belong to the stages that document them and are
// zero otherwise. Nothing in a Progress refers to memory the call reuses:
// an observer may keep it.
type Progress struct {
	Stage  Stage
	Status int

	// StageBackendProgress and StagePolling.
	Done    float64
	Total   float64 // 0: unknown
	Message string

	// StageBackendLog.
	Level  string
	Logger string
	Data   json.RawMessage

	// StagePolling.
	Polls int
}

// Observer receives the stages of a call, on the calling goroutine, as
// they happen; the gateway turns them into MCP progress and log
// notifications.
type Observer func(Progress)
