package gateway

import (
	"context"
	"time"

	"github.com/mcp-gateway/mcp-gateway/quota"
	"github.com/mcp-gateway/mcp-gateway/sessions"
	"github.com/mcp-gateway/mcp-gateway/sessions/pending"
)

// timeoutStore bounds every store call by d (Config.StoreTimeout): a
// stalled Redis fails a request after d with 503, not after the client
// library's own retries.
type timeoutStore struct {
	sessions.Store
	d time.Duration
}

func (t timeoutStore) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, t.d)
}

func (t timeoutStore) Create(ctx context.Context, s *sessions.Session) error {
	ctx, cancel := t.bound(ctx)
	defer cancel()
	return t.Store.Create(ctx, s)
}

func (t timeoutStore) Get(ctx context.Context, id string) (*sessions.Session, error) {
	ctx, cancel := t.bound(ctx)
	defer cancel()
	return t.Store.Get(ctx, id)
}

func (t timeoutStore) Update(ctx context.Context, id string, fn func(*sessions.Session) error) (*sessions.Session, error) {
	ctx, cancel := t.bound(ctx)
	defer cancel()
	return t.Store.Update(ctx, id, fn)
}

func (t timeoutStore) Touch(ctx context.Context, id string, now time.Time) error {
	ctx, cancel := t.bound(ctx)
	defer cancel()
	return t.Store.Touch(ctx, id, now)
}

func (t timeoutStore) Delete(ctx context.Context, id string) error {
	ctx, cancel := t.bound(ctx)
	defer cancel()
	return t.Store.Delete(ctx, id)
}

func (t timeoutStore) Append(ctx context.Context, id string, data []byte) (string, error) {
	ctx, cancel := t.bound(ctx)
	defer cancel()
	return t.Store.Append(ctx, id, data)
}

func (t timeoutStore) ReadAfter(ctx context.Context, id, after string, max int) ([]sessions.Event, error) {
	ctx, cancel := t.bound(ctx)
	defer cancel()
	return t.Store.ReadAfter(ctx, id, after, max)
}

func (t timeoutStore) LastEventID(ctx context.Context, id string) (string, error) {
	ctx, cancel := t.bound(ctx)
	defer cancel()
	return t.Store.LastEventID(ctx, id)
}

func (t timeoutStore) Ping(ctx context.Context) error {
	ctx, cancel := t.bound(ctx)
	defer cancel()
	return t.Store.Ping(ctx)
}

// timeoutGate bounds every rate-limit and quota check by d: after d a
// stalled Redis lets a rate-limited call through (the feature fails open)
// and refuses a call under a quota (quotas fail closed), not after seconds.
type timeoutGate struct {
	quota.Gate
	d time.Duration
}

func (t timeoutGate) Admit(ctx context.Context, a quota.Admission) (quota.Verdict, error) {
	ctx, cancel := context.WithTimeout(ctx, t.d)
	defer cancel()
	return t.Gate.Admit(ctx, a)
}

// timeoutCounter bounds every session-counter call by d: an initialize
// against a stalled Redis answers 503 after d, not after the client's
// own timeouts.
type timeoutCounter struct {
	quota.SessionCounter
	d time.Duration
}

func (t timeoutCounter) Open(ctx context.Context, client, id string, perClient, total int, ttl time.Duration) (bool, string, error) {
	ctx, cancel := context.WithTimeout(ctx, t.d)
	defer cancel()
	return t.SessionCounter.Open(ctx, client, id, perClient, total, ttl)
}

func (t timeoutCounter) Refresh(ctx context.Context, client, id string, ttl time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, t.d)
	defer cancel()
	return t.SessionCounter.Refresh(ctx, client, id, ttl)
}

func (t timeoutCounter) Close(ctx context.Context, client, id string) error {
	ctx, cancel := context.WithTimeout(ctx, t.d)
	defer cancel()
	return t.SessionCounter.Close(ctx, client, id)
}

// timeoutPending bounds every call to the pending-request store by d, as
// timeoutStore does the session store's.
type timeoutPending struct {
	pending.Store
	d time.Duration
}

func (t timeoutPending) Add(ctx context.Context, rec pending.Record, max int) error {
	ctx, cancel := context.WithTimeout(ctx, t.d)
	defer cancel()
	return t.Store.Add(ctx, rec, max)
}

func (t timeoutPending) Get(ctx context.Context, session, id string) (pending.Record, error) {
	ctx, cancel := context.WithTimeout(ctx, t.d)
	defer cancel()
	return t.Store.Get(ctx, session, id)
}

func (t timeoutPending) Remove(ctx context.Context, session, id string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, t.d)
	defer cancel()
	return t.Store.Remove(ctx, session, id)
}

func (t timeoutPending) RemoveSession(ctx context.Context, session string) ([]pending.Record, error) {
	ctx, cancel := context.WithTimeout(ctx, t.d)
	defer cancel()
	return t.Store.RemoveSession(ctx, session)
}

func (t timeoutPending) Consume(ctx context.Context, token string, ttl time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, t.d)
	defer cancel()
	return t.Store.Consume(ctx, token, ttl)
}

func (t timeoutPending) SharedKey(ctx context.Context, name string, candidate []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, t.d)
	defer cancel()
	return t.Store.SharedKey(ctx, name, candidate)
}
