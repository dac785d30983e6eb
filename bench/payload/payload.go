// Package payload is the JSON the benchmark's backend serves, shared by the
// harness (which builds it) and the SDK server (whose typed tool output
// decodes it). It imports no project package.
package payload

// Item is one entry of the list.
type Item struct {
	ID     int      `json:"id"`
	Name   string   `json:"name"`
	SKU    string   `json:"sku"`
	Price  float64  `json:"price"`
	Tags   []string `json:"tags"`
	Active bool     `json:"active"`
}

// List is the backend's body: an object with an items array.
type List struct {
	Items []Item `json:"items"`
}
