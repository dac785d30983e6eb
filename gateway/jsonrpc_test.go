package gateway

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/gateway/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stdlibEnvelopeCode is how the envelope was judged with encoding/json
// before the scanner: decodeMessage must agree on every input whose member
// names are spelled exactly (encoding/json also matched other cases).
func stdlibEnvelopeCode(raw []byte) int {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		ID      json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || !json.Valid(raw) {
			return mcp.CodeParseError
		}
		return mcp.CodeInvalidRequest
	}
	if m.JSONRPC != "2.0" {
		return mcp.CodeInvalidRequest
	}
	return 0
}

func TestDecodeMessageAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":1,"id":1,"method":"ping"`,
		`{"jsonrpc":1,"id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":7,"id":1 x`,
		`{"jsonrpc":"2.0","method":7,"id":1}`,
		`{"jsonrpc":"2.0","jsonrpc":null,"id":1,"method":"ping"}`,
		`{"jsonrpc":null,"id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"ping","method":null,"id":1}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":[1,2,}}`,
		`{"jsonrpc":["2.0"],"id":1,"method":"ping"}`,
		`null`, `[]`, `"x"`, `{}`, ` `, `{"jsonrpc":"2.0"`,
	} {
		_, perr := decodeMessage([]byte(in))
		got := 0
		if perr != nil {
			got = perr.Code
		}
		assert.Equal(t, stdlibEnvelopeCode([]byte(in)), got, "%s", in)
	}
	m, perr := decodeMessage([]byte(`{"jsonrpc":"2.0","method":"ping","method":null,"id":1}`))
	require.Nil(t, perr)
	assert.Equal(t, "ping", m.Method, "null leaves a member as it was, as encoding/json does")
}

func TestReadMetaSkipsMembersOfTheWrongType(t *testing.T) {
	// A wrongly typed member before _meta must not hide _meta: era
	// detection reads the protocol version from it.
	m := readMeta(json.RawMessage(`{"uri":5,"name":"getNote","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":7}}`))
	assert.False(t, m.OK)
	require.NotNil(t, m.fields)
	require.NotNil(t, m.fields.ProtocolVersion)
	assert.Equal(t, "2026-07-28", *m.fields.ProtocolVersion)
	assert.Equal(t, "7", string(m.fields.ProgressToken))
	require.NotNil(t, m.Name)
	assert.Equal(t, "getNote", *m.Name)
	assert.Nil(t, m.URI)

	m = readMeta(json.RawMessage(`{"_meta":{"io.modelcontextprotocol/logLevel":3,"io.modelcontextprotocol/protocolVersion":"2025-06-18"},"name":"a"}`))
	assert.False(t, m.OK)
	require.NotNil(t, m.fields.ProtocolVersion)
	assert.Nil(t, m.fields.LogLevel)

	m = readMeta(json.RawMessage(`{"_meta":null,"name":null,"arguments":{"id":1}}`))
	assert.True(t, m.OK)
	assert.Nil(t, m.fields)
	assert.Nil(t, m.Name)
	assert.Equal(t, `{"id":1}`, string(m.Arguments))
}
