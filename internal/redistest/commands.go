package redistest

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Commands is a go-redis hook that records the command names a client
// sends, one entry per round trip (a pipeline is one); a new connection's
// handshake (HELLO, CLIENT) is left out. Add it with client.AddHook.
type Commands struct {
	mu   sync.Mutex
	sent [][]string
}

func (h *Commands) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *Commands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.record(cmd)
		return next(ctx, cmd)
	}
}

func (h *Commands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.record(cmds...)
		return next(ctx, cmds)
	}
}

func (h *Commands) record(cmds ...redis.Cmder) {
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.Name()
	}
	if len(names) > 0 && (names[0] == "hello" || names[0] == "client") {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sent = append(h.sent, names)
}

// Take returns the round trips recorded since the last Take.
func (h *Commands) Take() [][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sent
	h.sent = nil
	return s
}
