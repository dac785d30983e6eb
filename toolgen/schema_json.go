package toolgen

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
)

// Generated schemas are written as JSON directly, in a fixed keyword order,
// so that they are byte-for-byte deterministic and cost one pass to build.

// member is one keyword of a JSON object, its value already encoded.
type member struct {
	key string
	val []byte
}

type members []member

func (ms members) get(key string) []byte {
	for _, m := range ms {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

func (ms members) has(key string) bool { return ms.get(key) != nil }

// set replaces key's value or appends it.
func (ms *members) set(key string, val []byte) {
	for i := range *ms {
		if (*ms)[i].key == key {
			(*ms)[i].val = val
			return
		}
	}
	*ms = append(*ms, member{key, val})
}

// setDescription sets "description" where the converter would have put it:
// after $ref, type and title.
func (ms *members) setDescription(val []byte) {
	for i := range *ms {
		if (*ms)[i].key == "description" {
			(*ms)[i].val = val
			return
		}
	}
	at := 0
	for at < len(*ms) && ((*ms)[at].key == "$ref" || (*ms)[at].key == "type" || (*ms)[at].key == "title") {
		at++
	}
	*ms = append((*ms)[:at], append(members{{"description", val}}, (*ms)[at:]...)...)
}

func (ms *members) add(key string, val []byte) {
	*ms = append(*ms, member{key, val})
}

// addString adds key with s, unless s is empty: an empty title, format or
// pattern is how the document says nothing.
func (ms *members) addString(key, s string) {
	if s != "" {
		ms.add(key, jsonString(s))
	}
}

// addTrue adds key: true when b is set; false is the keyword's default.
func (ms *members) addTrue(key string, b bool) {
	if b {
		ms.add(key, jsonTrue)
	}
}

// addNonZeroUint adds key with u, unless u is 0: kin-openapi reads an
// absent minLength, minItems or minProperties as 0.
func (ms *members) addNonZeroUint(key string, u uint64) {
	if u > 0 {
		ms.add(key, jsonUint(u))
	}
}

// addUintPtr adds key with *u when the document gives a value.
func (ms *members) addUintPtr(key string, u *uint64) {
	if u != nil {
		ms.add(key, jsonUint(*u))
	}
}

// addValue adds key with a value decoded from the document, unless
// encoding/json cannot represent it (see jsonValue). The caller decides
// whether the value is present: a nil v is encoded as null.
func (ms *members) addValue(key string, v any) {
	if b := jsonValue(v); b != nil {
		ms.add(key, b)
	}
}

func (ms members) without(keys ...string) members {
	out := make(members, 0, len(ms))
	for _, m := range ms {
		drop := false
		for _, k := range keys {
			if m.key == k {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, m)
		}
	}
	return out
}

func (ms members) appendJSON(buf []byte) []byte {
	buf = append(buf, '{')
	for i, m := range ms {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendString(buf, m.key)
		buf = append(buf, ':')
		buf = append(buf, m.val...)
	}
	return append(buf, '}')
}

func (ms members) json() []byte { return ms.appendJSON(nil) }

var (
	jsonTrue  = []byte("true")
	jsonFalse = []byte("false")
)

func jsonString(s string) []byte { return appendString(nil, s) }

func jsonBool(b bool) []byte {
	if b {
		return jsonTrue
	}
	return jsonFalse
}

func jsonNumber(f float64) []byte {
	return strconv.AppendFloat(nil, f, 'g', -1, 64)
}

func jsonUint(u uint64) []byte { return strconv.AppendUint(nil, u, 10) }

func jsonStrings(list []string) []byte {
	buf := []byte{'['}
	for i, s := range list {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendString(buf, s)
	}
	return append(buf, ']')
}

func jsonArray(items [][]byte) []byte {
	buf := []byte{'['}
	for i, it := range items {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, it...)
	}
	return append(buf, ']')
}

// jsonValue encodes a value decoded from the document (enum members,
// defaults, examples). Maps come out with sorted keys. It returns nil for a
// value encoding/json cannot represent.
func jsonValue(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// appendString appends s as a JSON string without HTML escaping.
func appendString(buf []byte, s string) []byte { return jsonlex.AppendString(buf, s, false) }
