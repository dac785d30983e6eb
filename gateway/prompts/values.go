package prompts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
)

// Completion candidates from a tool: cached per caller, tool and
// arguments for valuesTTL, at most maxCached entries (when full, the
// expired go, then arbitrary ones), and at most maxValues values per entry;
// a key over maxKey bytes (huge chosen arguments) is not cached.
const (
	valuesTTL = 30 * time.Second
	maxCached = 1000
	maxValues = 10000
	maxKey    = 4 << 10
)

type valuesCache struct {
	mu      sync.Mutex
	entries map[string]cachedValues
}

type cachedValues struct {
	values []string
	at     time.Time
}

// valuesFrom calls src's tool as r's caller with the chosen arguments and
// collects src.Field of each item of its result.
func (f *Feature) valuesFrom(r *mcp.Request, src *ValuesFrom, chosen map[string]string) ([]string, error) {
	if f.callTool == nil {
		return nil, fmt.Errorf("prompts: completion from %s, but the gateway has no tool caller", src.Operation)
	}
	key := cacheKey(r, src, chosen)
	now := time.Now()
	f.values.mu.Lock()
	if e, ok := f.values.entries[key]; ok && now.Sub(e.at) < valuesTTL {
		f.values.mu.Unlock()
		return e.values, nil
	}
	f.values.mu.Unlock()

	res, err := f.callTool(r, src.Operation, chosen)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, mcp.NewError(mcp.CodeInternalError, "Completing failed: the operation %s answered: %s", src.Operation,
			mcp.Verbatim(mcp.TruncateTo(res.FirstText(), 300, "…"))).WithData(map[string]any{"kind": "tool_error"})
	}
	raw := res.StructuredContent
	if len(raw) == 0 && len(res.Content) > 0 && res.Content[0].Type == "text" {
		raw = json.RawMessage(res.Content[0].Text)
	}
	values := fieldValues(raw, src.Field)
	if len(key) > maxKey {
		return values, nil
	}

	f.values.mu.Lock()
	defer f.values.mu.Unlock()
	if f.values.entries == nil {
		f.values.entries = map[string]cachedValues{}
	}
	if len(f.values.entries) >= maxCached {
		for k, e := range f.values.entries {
			if now.Sub(e.at) >= valuesTTL {
				delete(f.values.entries, k)
			}
		}
		for k := range f.values.entries {
			if len(f.values.entries) < maxCached {
				break
			}
			delete(f.values.entries, k)
		}
	}
	f.values.entries[key] = cachedValues{values: values, at: now}
	return values, nil
}

// cacheKey names who asks (what one caller's tool returns is not another's)
// and with what.
func cacheKey(r *mcp.Request, src *ValuesFrom, chosen map[string]string) string {
	var b strings.Builder
	b.WriteString(r.Identity())
	b.WriteByte(0)
	b.WriteString(src.Operation)
	b.WriteByte(0)
	b.WriteString(src.Field)
	for _, k := range slices.Sorted(maps.Keys(chosen)) {
		b.WriteByte(0)
		b.WriteString(strconv.Quote(k))
		b.WriteString(strconv.Quote(chosen[k]))
	}
	return b.String()
}

// fieldValues are the field of each item of a tool's JSON result: the
// result itself when it is an array, else the first array among its
// members (a wrapped {"result": [...]} or a page's {"items": [...]}).
// Strings, numbers and booleans become candidates; repeats are dropped.
func fieldValues(raw json.RawMessage, field string) []string {
	// Numbers as written: an ID past 2^53 would otherwise come back as
	// another (9007199254740993 as ...992), a candidate no item has.
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil
	}
	if _, err := d.Token(); err != io.EOF {
		return nil // more than one value, as json.Unmarshal refuses
	}
	items, ok := v.([]any)
	if obj, isObj := v.(map[string]any); isObj {
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if arr, isArr := obj[k].([]any); isArr {
				items, ok = arr, true
				break
			}
		}
	}
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, it := range items {
		var val any = it
		if obj, isObj := it.(map[string]any); isObj {
			val = obj[field]
		}
		var s string
		switch x := val.(type) {
		case string:
			s = x
		case json.Number:
			s = x.String()
		case bool:
			s = strconv.FormatBool(x)
		default:
			continue
		}
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
			if len(out) == maxValues {
				break
			}
		}
	}
	return out
}
