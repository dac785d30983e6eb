package toolgen

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
)

// benchBody is a typical REST list: quote-dense, short strings, ~10 KB.
func benchBody() []byte {
	type item struct {
		ID     int      `json:"id"`
		Name   string   `json:"name"`
		SKU    string   `json:"sku"`
		Price  float64  `json:"price"`
		Tags   []string `json:"tags"`
		Active bool     `json:"active"`
		Note   string   `json:"note"`
	}
	var items []item
	for i := 1; i <= 60; i++ {
		items = append(items, item{ID: i, Name: "item " + strconv.Itoa(i), SKU: fmt.Sprintf("SKU-%06d", i),
			Price: float64(i*137%10000) / 100, Tags: []string{"alpha", "beta"}, Active: i%3 != 0,
			Note: "a longer free-text description, with \"quotes\" and a newline\nhere"})
	}
	b, _ := json.Marshal(map[string]any{"items": items})
	return b
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
	b.Run("validJSON", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !validJSON(body) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("AppendJSONString", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		buf := make([]byte, 0, 2*len(body))
		s := string(body)
		for b.Loop() {
			buf = AppendJSONString(buf[:0], s, true)
		}
	})
}
