package call

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkCall measures the hot path: JSON arguments → validated request →
// httptest backend → mapped result. The "baseline" case sends the same
// request with a bare http.Client over the same transport, so the
// difference between them is the call path's own cost.
func BenchmarkCall(b *testing.B) {
	doc := ctDocFile(b, "bodies.yaml")
	reply := []byte(`{"id":42,"name":"Rex","status":"available","age":3}`)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
	}))
	b.Cleanup(backend.Close)
	caller := ctCaller(b, doc, Config{BaseURL: backend.URL, Headers: map[string]string{"X-Tenant": "bench"}})

	cases := []struct {
		name, method, path string
		args               json.RawMessage
	}{
		{"json-body", "POST", "/pets", json.RawMessage(`{"name": "Rex", "status": "available", "age": 3, "owner": {"email": "a@b.c"}}`)},
		{"path-and-body", "PATCH", "/pets/{id}", json.RawMessage(`{"id": 42, "name": "Rex"}`)},
	}
	b.Run("baseline", func(b *testing.B) {
		client := &http.Client{Transport: sharedTransport()}
		body := []byte(`{"age":3,"name":"Rex","owner":{"email":"a@b.c"},"status":"available"}`)
		b.ReportAllocs()
		for b.Loop() {
			req, err := http.NewRequest("POST", backend.URL+"/pets", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.ReadAll(resp.Body)
			_ = resp.Body.Close()
		}
	})
	for _, c := range cases {
		tool := ctTool(b, doc, c.method, c.path)
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res := caller.Call(ctx, tool, c.args)
				if res.IsError {
					b.Fatal(ctText(res))
				}
			}
		})
	}
}
