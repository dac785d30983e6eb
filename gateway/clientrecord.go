package gateway

// What a session keeps of its client. initialize carries the client's
// capabilities and clientInfo, and a session record lives (in Redis, on
// every replica's cache) as long as the session: a client must not park
// 128 KB there per session. The record keeps the capability names and the
// flags the gateway may act on, and clientInfo's name, title and version;
// everything else is dropped, not stored.

import (
	"encoding/json"
	"slices"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
)

const (
	// maxInfoField bounds each of clientInfo's name, title and version.
	maxInfoField = 256
	// maxCapabilities bounds the stored capabilities.
	maxCapabilities = 4 << 10
	// maxCapabilityNames bounds how many capability names are kept.
	maxCapabilityNames = 32
)

// capabilityFlags are the sub-members of a client capability that say
// what the client can do (the rest is left out).
var capabilityFlags = []string{"listChanged", "form", "url", "context", "tools", "subscribe"}

// trimClientInfo keeps name, title and version (strings, each cut to
// maxInfoField bytes); nil when none is there.
func trimClientInfo(raw json.RawMessage) json.RawMessage {
	out := map[string]string{}
	_ = jsonlex.ScanObject(raw, func(key, val []byte) error {
		switch k := string(key); k {
		case "name", "title", "version":
			if s, ok := jsonlex.String(val); ok {
				out[k] = mcp.TruncateTo(s, maxInfoField, "")
			}
		}
		return nil
	})
	if len(out) == 0 {
		return nil
	}
	b, _ := mcp.Marshal(out)
	return b
}

// trimCapabilities keeps each capability's name (at most
// maxCapabilityNames; a name over 64 bytes is dropped) with its known flags: a
// boolean as it is, anything else as {}. The result is at most
// maxCapabilities bytes.
func trimCapabilities(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	caps := map[string]map[string]any{}
	var names []string
	_ = jsonlex.ScanObject(raw, func(key, val []byte) error {
		name := string(key)
		if len(name) > 64 || len(caps) >= maxCapabilityNames {
			return nil
		}
		flags := map[string]any{}
		_ = jsonlex.ScanObject(val, func(k, v []byte) error {
			if slices.Contains(capabilityFlags, string(k)) {
				switch string(v) {
				case "true":
					flags[string(k)] = true
				case "false":
					flags[string(k)] = false
				default:
					flags[string(k)] = struct{}{}
				}
			}
			return nil
		})
		if _, dup := caps[name]; !dup {
			names = append(names, name)
		}
		caps[name] = flags
		return nil
	})
	for {
		b, _ := mcp.Marshal(caps)
		if len(b) <= maxCapabilities || len(names) == 0 {
			return b
		}
		delete(caps, names[len(names)-1])
		names = names[:len(names)-1]
	}
}
