// Package watch tells subscribed clients when a resource changes, on every
// replica: it keeps resources/subscribe and subscriptions/listen
// subscriptions in the shared subscription store, polls each subscribed
// resource that can change from exactly one replica at a time (a lease per
// URI in the shared lease store; the holder renews it, and when it dies
// another replica takes the URI over within twice the lease's TTL), takes
// change events from the backend (Webhook: POST /webhooks/resources, signed
// with HMAC-SHA256), and delivers one notifications/resources/updated per
// subscriber per burst of changes: a change claims the URI's delivery for
// Config.Coalesce (another lease), and whoever claimed it delivers once
// the window ends. Sessions get it on their push stream (Deps.Deliver, on
// whichever replica holds it); a listen stream (2026-07-28) hears it over
// the bus on the replica that holds it.
//
// It sees resources only through Deps (how to poll one, whether it can
// change) and imports no feature package and not package gateway: it may
// import sessions/subscriptions, pubsub, pubsub/lease, toolgen/call (the
// conditional-request validators) and internal/lograte.
package watch
