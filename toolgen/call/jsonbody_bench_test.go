package call

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/internal/jsonlex"
)

// benchBody is a typical REST list: quote-dense, short strings, ~10 KB.
func benchBody() []byte {
	b := []byte(`{"items":[`)
	for i := 1; i <= 60; i++ {
		if i > 1 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"id":%d,"name":"item %d","sku":"SKU-%06d","price":%.2f,"tags":["alpha","beta"],"active":%t,`+
			`"note":"a longer free-text description, with \"quotes\" and a newline\nhere"}`,
			i, i, i, float64(i*137%10000)/100, i%3 != 0)
	}
	return append(b, "]}"...)
}

func BenchmarkJSONBody(b *testing.B) {
	body := benchBody()
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !json.Valid(body) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("Valid", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !jsonlex.Valid(body) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("AppendString", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		buf := make([]byte, 0, 2*len(body))
		s := string(body)
		for b.Loop() {
			buf = jsonlex.AppendString(buf[:0], s, true)
		}
	})
}
