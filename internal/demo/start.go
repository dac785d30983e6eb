package demo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Start listens on addr (for example "127.0.0.1:0") and serves a fresh
// Server there until stop is called. ctx bounds only the listen. stop shuts
// the server down gracefully, closing it outright if its ctx expires first,
// and returns once the serving goroutine has exited; it may be called again.
func Start(ctx context.Context, addr string) (baseURL string, stop func(context.Context) error, err error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("demo: listen: %w", err)
	}
	srv := &http.Server{Handler: New().Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	var serveErr error
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			serveErr = fmt.Errorf("demo: serve: %w", err)
		}
	}()
	stop = func(ctx context.Context) error {
		err := srv.Shutdown(ctx)
		if err != nil {
			_ = srv.Close()
			err = fmt.Errorf("demo: shutdown: %w", err)
		}
		<-done
		return errors.Join(err, serveErr)
	}
	return "http://" + ln.Addr().String(), stop, nil
}
