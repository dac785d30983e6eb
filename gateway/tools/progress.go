package tools

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

// stageHeartbeat is the gateway's own "still waiting" progress, sent
// every Config.ProgressHeartbeat while a backend round runs.
const stageHeartbeat call.Stage = 1000

// progressTotal is the total every progress notification of a call
// carries: the three stages of an exchange (sent, answered, read).
const progressTotal = float64(call.StageCount)

// reporter turns one call's observed events into notifications/progress
// and notifications/message. Progress is on one scale for the whole call,
// so it never goes back, whatever mix of events arrives: each stage k
// (sent, answered, read) is the value k of progressTotal, and what happens
// between stages — the backend's own progress (SSE progress events, an
// asynchronous operation's status), heartbeats — moves within (k, k+1):
// by the backend's fraction when it gives one, else a tenth of what is
// left. The backend's own numbers are in the message.
type reporter struct {
	r     *mcp.Request
	tool  string
	start time.Time
	debug bool

	mu    sync.Mutex // the heartbeat observes from its own goroutine
	base  float64    // where the current backend round's stages start
	floor float64    // the last stage reached
	last  float64    // the last progress sent
	// total is progressTotal until a second backend round (after input
	// from the client) starts again at "sent": from then on the call's
	// length is unknown, and progress goes on without a total.
	total float64
}

func newReporter(r *mcp.Request, tool string, start time.Time, debug bool) *reporter {
	return &reporter{r: r, tool: tool, start: start, debug: debug, total: progressTotal}
}

func (p *reporter) observe(pr call.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch pr.Stage {
	case call.StageSent:
		p.stage(1, "request sent to the backend")
	case call.StageAnswered:
		msg := fmt.Sprintf("backend answered %d %s", pr.Status, http.StatusText(pr.Status))
		p.stage(2, msg)
		// The backend's status and time: what an operator following a
		// session at info wants to see of each call.
		if p.r.Enabled(mcp.LevelInfo) {
			p.r.Log(mcp.LevelInfo, map[string]any{"message": msg, "tool": p.tool, "status": pr.Status,
				"elapsedMs": time.Since(p.start).Milliseconds()})
		}
	case call.StageMapped:
		p.stage(3, "response read")
	case call.StageBackendProgress:
		msg := pr.Message
		if msg == "" {
			msg = "backend progress"
		}
		if pr.Total > 0 {
			msg = fmt.Sprintf("%s (%g of %g)", msg, pr.Done, pr.Total)
			p.between(min(max(pr.Done/pr.Total, 0), 1), msg)
		} else {
			msg = fmt.Sprintf("%s (%g)", msg, pr.Done)
			p.between(-1, msg)
		}
	case call.StagePolling:
		msg := pr.Message
		switch {
		case msg != "":
		case pr.Polls > 0:
			msg = fmt.Sprintf("the backend is still working (status checked %d times)", pr.Polls)
		default:
			msg = "the backend is still working"
		}
		if pr.Total > 0 {
			p.between(min(max(pr.Done/pr.Total, 0), 1), fmt.Sprintf("%s (%g of %g)", msg, pr.Done, pr.Total))
		} else {
			p.between(-1, msg)
		}
	case call.StageBackendLog:
		p.backendLog(pr)
	case stageHeartbeat:
		p.between(-1, pr.Message)
	}
}

// stage reports reaching stage k.
func (p *reporter) stage(k float64, msg string) {
	if p.base+k <= p.floor {
		// A new backend round: its stages continue the scale.
		p.total = 0
		p.base = p.floor
	}
	k += p.base
	p.floor = k
	v := k
	if v <= p.last {
		v = p.next()
	}
	p.send(v, msg)
}

// between reports progress within the current stage: fraction f of it,
// or (f < 0) a step of a tenth of what is left.
func (p *reporter) between(f float64, msg string) {
	v := p.floor + 0.99*f
	if f < 0 || v <= p.last {
		v = p.next()
	}
	p.send(v, msg)
}

// next is a value above the last one, still within the current stage.
func (p *reporter) next() float64 {
	base := max(p.last, p.floor)
	return base + (p.floor+1-base)/10
}

func (p *reporter) send(v float64, msg string) {
	if v <= p.last || !p.r.WantsProgress() || (p.total > 0 && v > p.total) {
		// Behind, or past the end (a heartbeat racing the last stage).
		return
	}
	p.last = v
	p.r.ProgressValue(v, p.total, msg)
}

// backendLog forwards a backend's log event as notifications/message, at
// or above the session's level.
func (p *reporter) backendLog(pr call.Progress) {
	lvl, ok := mcp.ParseLogLevel(pr.Level)
	if !ok {
		lvl = mcp.LevelInfo
	}
	logger := pr.Logger
	if logger == "" {
		logger = "backend:" + p.tool
	}
	p.r.LogAs(lvl, logger, pr.Data)
}
