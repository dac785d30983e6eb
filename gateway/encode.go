package gateway

import "sync"

// bufPool holds the buffers responses are encoded into (mcp.AppendResponse).
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > 1<<20 { // let rare huge buffers go
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}
