package call

// Streaming backends: a 2xx answer of media type text/event-stream is read
// event by event as it arrives, within the call's timeout and the
// Caller's response size bound (over the whole stream), and each event is
// taken by its name:
//
//   - progress, data {"progress": n, "total"?: n, "message"?: s}:
//     StageBackendProgress, when n is more than the last progress (a
//     malformed one is ignored);
//   - log, data {"level": s, "data": any, "logger"?: s}: StageBackendLog
//     (a level that is not an MCP level is "info"; without data, ignored);
//   - result: the final body, mapped as a JSON 2xx response of the
//     operation would be (output schema included); reading stops there;
//   - error: an error result quoting the data as error excerpts are;
//   - any other (message, or no event field): its data is collected, and
//     a stream that ends without result or error is the collected data
//     joined by newlines, mapped as a text/plain 2xx response. A stream
//     that collected nothing is an error result.
//
// Every event's data is redacted before it is looked at. The framing is
// the WHATWG one (lines end in CRLF, LF or CR; "data" lines join with LF;
// comments start with ':'; id and retry are ignored), except that an
// event the stream ends in without its blank line is still dispatched: it
// is the backend's last word, often its result.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

const (
	eventStreamType = "text/event-stream"
	// maxProgressMessageBytes and maxLoggerBytes bound what a stream's
	// progress and log events pass on.
	maxProgressMessageBytes = 1024
	maxLoggerBytes          = 128
)

// stream maps an event stream; err is a failure to read it.
func (x *exchange) stream(resp *http.Response, method, publicURL string) (*mcp.PooledResult, error) {
	p := x.out.plan
	status := statusText(resp.StatusCode)
	events := newEventReader(resp.Body, x.c.maxBytes)
	lastProgress := math.Inf(-1)
	var collected [][]byte
	for {
		ev, err := events.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, errTooLarge) {
			return mcp.Pooled(mcp.ErrorResult(fmt.Sprintf("the backend's event stream exceeded %d bytes, the most this gateway reads", x.c.maxBytes))), nil
		}
		if err != nil {
			return nil, err
		}
		data := x.out.secrets.Bytes(ev.data)
		switch ev.name {
		case "progress":
			if pr, ok := progressEvent(data); ok && pr.Done > lastProgress {
				lastProgress = pr.Done
				pr.Status = resp.StatusCode
				x.observe(pr)
			}
		case "log":
			if pr, ok := logEvent(data); ok {
				pr.Status = resp.StatusCode
				x.observe(pr)
			}
		case "result":
			// data is the event's own memory, which nothing reuses: the
			// result may view it.
			res, _ := p.successResult(status, "application/json", data, publicURL)
			return mcp.Pooled(res), nil
		case "error":
			return mcp.Pooled(x.c.streamError(method, publicURL, data)), nil
		default:
			collected = append(collected, data)
		}
	}
	if len(collected) == 0 {
		return mcp.Pooled(mcp.ErrorResult("the backend's event stream ended without a result")), nil
	}
	res, _ := p.successResult(status, "text/plain; charset=utf-8", bytes.Join(collected, []byte("\n")), publicURL)
	return mcp.Pooled(res), nil
}

// streamError is the result of an error event: what Config.ErrorBody
// lets a backend error say, the data standing for the body.
func (c *Caller) streamError(method, publicURL string, data []byte) *mcp.CallToolResult {
	msg := fmt.Sprintf("backend reported an error for %s %s", method, requestPath(publicURL))
	if c.errBody != ErrorBodyNone {
		if text := scrubExcerpt(sanitizeExcerpt(data, errorExcerptBytes)); text != "" {
			msg += ": " + text
		}
	}
	return mcp.ErrorResult(msg)
}

// progressEvent reads a progress event's data.
func progressEvent(data []byte) (Progress, bool) {
	var ev struct {
		Progress *float64 `json:"progress"`
		Total    *float64 `json:"total"`
		Message  *string  `json:"message"`
	}
	if firstNonSpace(data) != '{' || json.Unmarshal(data, &ev) != nil || ev.Progress == nil {
		return Progress{}, false
	}
	pr := Progress{Stage: StageBackendProgress, Done: *ev.Progress}
	if ev.Total != nil && *ev.Total > 0 {
		pr.Total = *ev.Total
	}
	if ev.Message != nil {
		pr.Message = sanitizeExcerpt([]byte(*ev.Message), maxProgressMessageBytes)
	}
	return pr, true
}

// logEvent reads a log event's data.
func logEvent(data []byte) (Progress, bool) {
	var ev struct {
		Level  *string         `json:"level"`
		Logger *string         `json:"logger"`
		Data   json.RawMessage `json:"data"`
	}
	if firstNonSpace(data) != '{' || json.Unmarshal(data, &ev) != nil || ev.Data == nil {
		return Progress{}, false
	}
	pr := Progress{Stage: StageBackendLog, Level: "info", Data: ev.Data}
	if ev.Level != nil {
		if _, ok := mcp.ParseLogLevel(*ev.Level); ok {
			pr.Level = *ev.Level
		}
	}
	if ev.Logger != nil {
		pr.Logger = strings.ReplaceAll(sanitizeExcerpt([]byte(*ev.Logger), maxLoggerBytes), "\n", " ")
	}
	return pr, true
}

// event is one dispatched event; data is its own memory.
type event struct {
	name string // "message" when the stream named none
	data []byte
}

// eventReader splits an event stream into events, reading no more than
// limit bytes in all.
type eventReader struct {
	r      *bufio.Reader
	limit  int64
	read   int64
	skipLF bool // the last line ended in CR: a LF next belongs to it
	first  bool // no line read yet (a byte order mark may lead)
	line   []byte
	name   []byte
	data   []byte
}

func newEventReader(r io.Reader, limit int64) *eventReader {
	return &eventReader{r: bufio.NewReader(r), limit: limit, first: true}
}

// next returns the next event; io.EOF when the stream ended.
func (e *eventReader) next() (event, error) {
	e.name, e.data = e.name[:0], e.data[:0]
	hasData := false
	for {
		line, err := e.readLine()
		if errors.Is(err, io.EOF) {
			if hasData {
				return e.event(), nil
			}
			return event{}, io.EOF
		}
		if err != nil {
			return event{}, err
		}
		if len(line) == 0 {
			if hasData {
				return e.event(), nil
			}
			e.name = e.name[:0]
			continue
		}
		if line[0] == ':' {
			continue // a comment
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "event":
			e.name = append(e.name[:0], value...)
		case "data":
			if hasData {
				e.data = append(e.data, '\n')
			}
			e.data = append(e.data, value...)
			hasData = true
		}
	}
}

func (e *eventReader) event() event {
	ev := event{name: string(e.name), data: bytes.Clone(e.data)}
	if ev.name == "" {
		ev.name = "message"
	}
	if ev.data == nil {
		ev.data = []byte{}
	}
	return ev
}

// readLine returns the next line without its end. The slice is valid
// until the next call. A last line without an end is returned before
// io.EOF.
func (e *eventReader) readLine() ([]byte, error) {
	e.line = e.line[:0]
	if e.first {
		// A stream may begin with a byte order mark, which is not data.
		e.first = false
		if b, _ := e.r.Peek(3); bytes.Equal(b, []byte("\xef\xbb\xbf")) {
			if err := e.discard(3); err != nil {
				return nil, err
			}
		}
	}
	for {
		if _, err := e.r.Peek(1); err != nil {
			if errors.Is(err, io.EOF) && len(e.line) > 0 {
				return e.line, nil
			}
			return nil, err
		}
		buf, _ := e.r.Peek(e.r.Buffered())
		if e.skipLF {
			e.skipLF = false
			if buf[0] == '\n' {
				if err := e.discard(1); err != nil {
					return nil, err
				}
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			e.line = append(e.line, buf...)
			if err := e.discard(len(buf)); err != nil {
				return nil, err
			}
			continue
		}
		e.line = append(e.line, buf[:i]...)
		e.skipLF = buf[i] == '\r'
		if err := e.discard(i + 1); err != nil {
			return nil, err
		}
		return e.line, nil
	}
}

// discard consumes n buffered bytes, counting them against the limit.
func (e *eventReader) discard(n int) error {
	_, _ = e.r.Discard(n)
	e.read += int64(n)
	if e.read > e.limit {
		return errTooLarge
	}
	return nil
}
