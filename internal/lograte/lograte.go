// Package lograte holds back repeated log lines: one line per kind a
// second, the next one saying how many were left out. An outage fails
// every request, and one line per request would drown the log. It
// imports only the standard library: no project package.
package lograte

import (
	"sync"
	"time"
)

// Limiter decides which lines go out. The zero Limiter is ready.
type Limiter struct {
	mu    sync.Mutex
	kinds map[string]*kind
}

type kind struct {
	last time.Time
	held int
}

// Allow reports whether a line of the given kind may be written at now,
// and how many were held back since the last one that was.
func (l *Limiter) Allow(k string, now time.Time) (ok bool, held int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.kinds == nil {
		l.kinds = map[string]*kind{}
	}
	e := l.kinds[k]
	if e == nil {
		e = &kind{}
		l.kinds[k] = e
	}
	if now.Sub(e.last) < time.Second {
		e.held++
		return false, 0
	}
	e.last, held, e.held = now, e.held, 0
	return true, held
}
