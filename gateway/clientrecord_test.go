package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-gateway/mcp-gateway/internal/redistest"
	"github.com/mcp-gateway/mcp-gateway/pubsub"
	"github.com/mcp-gateway/mcp-gateway/sessions"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func TestClientRecordKeepsOnlyWhatTheGatewayReads(t *testing.T) {
	info := trimClientInfo(json.RawMessage(`{"name":"` + strings.Repeat("n", 1000) + `","title":"T","version":"1.2","icons":[{"src":"` + strings.Repeat("i", 5000) + `"}],"extra":{"x":1}}`))
	var got map[string]string
	require.NoError(t, json.Unmarshal(info, &got))
	require.Equal(t, map[string]string{"name": strings.Repeat("n", maxInfoField), "title": "T", "version": "1.2"}, got)

	caps := trimCapabilities(json.RawMessage(`{"roots":{"listChanged":true,"junk":"` + strings.Repeat("j", 5000) + `"},"sampling":{},"elicitation":{"form":{"x":1},"url":{}},"experimental":{"big":"` + strings.Repeat("e", 5000) + `"}}`))
	require.JSONEq(t, `{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}},"experimental":{}}`, string(caps))

	var many strings.Builder
	many.WriteString("{")
	for i := range 1000 {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, `"cap%04d_%s":{"listChanged":true}`, i, strings.Repeat("c", 50))
	}
	many.WriteString("}")
	caps = trimCapabilities(json.RawMessage(many.String()))
	require.LessOrEqual(t, len(caps), maxCapabilities)
	require.Nil(t, trimCapabilities(nil))
}

// Bytes per session, in Redis and in process, for a normal initialize and
// for one that fills capabilities and clientInfo to just under the 64 KiB
// each the gateway accepts (the README's sizing paragraph has the figures).
func TestSessionRecordSize(t *testing.T) {
	srv := redistest.Standalone(t)
	rdb := srv.Client(t)
	prefix := redistest.Prefix(t)
	redistest.Cleanup(t, rdb, prefix)
	store := sessions.NewRedis(rdb, prefix, sessions.Limits{TTL: time.Hour})
	mem := sessions.NewMemory(sessions.Limits{TTL: time.Hour})
	normal := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}}},"clientInfo":{"name":"claude-code","title":"Claude Code","version":"2.1.0"}}}`
	fat := strings.Repeat("x", 60<<10)
	adversarial := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true,"pad":"` + fat + `"}},"clientInfo":{"name":"` + fat + `","version":"1"}}}`
	for _, st := range []struct {
		name  string
		store sessions.Store
	}{{"redis", store}, {"memory", mem}} {
		g := newTestGatewayWith(t, Config{}, Deps{Store: st.store, Bus: pubsub.NewMemory()})
		for _, tc := range []struct{ name, body string }{{"normal", normal}, {"adversarial", adversarial}} {
			r := g.do(t, exchange{body: tc.body})
			require.Equal(t, 200, r.status, "%s", r.body)
			sid := r.header.Get("Mcp-Session-Id")
			sess, err := st.store.Get(context.Background(), sid)
			require.NoError(t, err)
			record, err := json.Marshal(sess)
			require.NoError(t, err)
			require.Less(t, len(record), 2048, "%s: the record keeps what the gateway reads: %s", tc.name, record)
			if st.name == "redis" {
				usage, err := rdb.MemoryUsage(context.Background(), prefix+"s:{"+sid+"}").Result()
				require.NoError(t, err)
				t.Logf("%s initialize: record %d bytes of JSON, Redis MEMORY USAGE %d bytes", tc.name, len(record), usage)
				require.Less(t, usage, int64(4096), tc.name)
			} else {
				t.Logf("%s initialize: record %d bytes of JSON in process", tc.name, len(record))
			}
		}
	}
}
