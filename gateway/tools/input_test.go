package tools

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/toolgen/call"
)

func TestMissingCapabilities(t *testing.T) {
	form := mcp.InputRequest{Method: mcp.MethodElicit, Params: json.RawMessage(`{"message":"m","requestedSchema":{}}`)}
	url := mcp.InputRequest{Method: mcp.MethodElicit, Params: json.RawMessage(`{"mode":"url","url":"https://x","message":"m"}`)}
	sample := mcp.InputRequest{Method: mcp.MethodSample, Params: json.RawMessage(`{}`)}
	roots := mcp.InputRequest{Method: mcp.MethodListRoots}
	for _, tc := range []struct {
		caps string
		reqs mcp.InputRequests
		want []string
	}{
		{`{}`, mcp.InputRequests{"a": form}, []string{"elicitation"}},
		{`{"elicitation":{}}`, mcp.InputRequests{"a": form}, nil},
		{`{"elicitation":{"form":{}}}`, mcp.InputRequests{"a": form}, nil},
		{`{"elicitation":{"url":{}}}`, mcp.InputRequests{"a": form}, []string{"elicitation"}},
		{`{"elicitation":{}}`, mcp.InputRequests{"a": url}, []string{"elicitation.url"}},
		{`{"elicitation":{"url":{}}}`, mcp.InputRequests{"a": url}, nil},
		{`{"sampling":{}}`, mcp.InputRequests{"a": sample, "b": roots}, []string{"roots"}},
		{`{"sampling":true,"roots":{"listChanged":true}}`, mcp.InputRequests{"a": sample, "b": roots}, []string{"sampling"}},
		{`not json`, mcp.InputRequests{"a": roots, "b": roots}, []string{"roots"}},
	} {
		require.Equal(t, tc.want, missingCapabilities(json.RawMessage(tc.caps), tc.reqs), "%s", tc.caps)
	}
}

func TestDeclined(t *testing.T) {
	for answer, want := range map[string]string{
		`{"action":"accept","content":{"confirm":true}}`:  "",
		`{"action":"accept","content":{"confirm":false}}`: "The user did not confirm the call",
		`{"action":"accept","content":{}}`:                "The user did not confirm the call",
		`{"action":"accept","content":{"confirm":"yes"}}`: "The confirmation answer was not understood",
		`{"action":"decline"}`:                            "The user declined the call",
		`{"action":"cancel"}`:                             "The user cancelled the call",
		`{"action":"maybe"}`:                              "The confirmation answer was not understood",
		`[]`:                                              "The confirmation answer was not understood",
	} {
		require.Equal(t, want, declined(json.RawMessage(answer)), answer)
	}
}

type capture struct{ progress []mcp.ProgressParams }

func (c *capture) Notify(method string, params any) {
	if p, ok := params.(mcp.ProgressParams); ok {
		c.progress = append(c.progress, p)
	}
}

// TestProgressNeverGoesBack: whatever mix of stages, backend progress,
// polls and heartbeats a call sees (several input rounds included),
// progress only increases, and a total is never exceeded.
func TestProgressNeverGoesBack(t *testing.T) {
	stages := []call.Progress{
		{Stage: call.StageSent}, {Stage: call.StageAnswered, Status: 200},
		{Stage: call.StageBackendProgress, Done: 1, Total: 10}, {Stage: call.StageBackendProgress, Done: 9, Total: 10},
		{Stage: call.StageBackendProgress, Done: 3}, {Stage: call.StagePolling, Polls: 2},
		{Stage: call.StagePolling, Done: 1, Total: 2}, {Stage: stageHeartbeat, Message: "waiting"},
		{Stage: call.StageMapped},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		out := &capture{}
		r := &mcp.Request{ProgressToken: json.RawMessage(`"t"`), Out: out, LogLevel: mcp.LevelOff}
		rep := newReporter(r, "tool", time.Now(), false)
		for range 2 + rng.IntN(30) {
			rep.observe(stages[rng.IntN(len(stages))])
		}
		for i, p := range out.progress {
			if p.Total > 0 {
				require.LessOrEqual(t, p.Progress, p.Total, "trial %d: %+v", trial, out.progress)
			}
			if i > 0 {
				require.Greater(t, p.Progress, out.progress[i-1].Progress, "trial %d: %+v", trial, out.progress)
			}
		}
	}
}
