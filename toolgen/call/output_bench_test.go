package call

import (
	"encoding/json"
	"fmt"
	"testing"
)

const benchOutputSchema = `{"type":"object","properties":{"items":{"type":"array","items":{"$ref":"#/$defs/Item"}}},"$defs":{"Item":{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string"},"sku":{"type":"string"},"price":{"type":"number"},"tags":{"type":"array","items":{"type":"string"}},"active":{"type":"boolean"}}}}}`

func benchOutputBody(n int) []byte {
	type item struct {
		ID     int      `json:"id"`
		Name   string   `json:"name"`
		SKU    string   `json:"sku"`
		Price  float64  `json:"price"`
		Tags   []string `json:"tags"`
		Active bool     `json:"active"`
	}
	var items []item
	for i := range n {
		items = append(items, item{ID: i, Name: fmt.Sprintf("item %d", i), SKU: fmt.Sprintf("SKU-%06d", i), Price: float64(i) + 0.99, Tags: []string{"a", "b"}, Active: i%2 == 0})
	}
	b, _ := json.Marshal(map[string]any{"items": items})
	return b
}

// BenchmarkOutputCheck measures the output check on a 10 KB list: the fast
// check, which also validates the JSON (the body gets no other scan).
func BenchmarkOutputCheck(b *testing.B) {
	check := compileOutput([]byte(benchOutputSchema))
	if check == nil {
		b.Fatal("schema does not compile")
	}
	body := benchOutputBody(100)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if where := check.check(body, false); where != "" {
			b.Fatal(where)
		}
	}
}
