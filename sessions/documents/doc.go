// Package documents is where the replicas of a deployment agree on which
// version of the backend's OpenAPI document they serve during live reload.
//
// One replica (the lease holder; leasing is not this package's concern)
// fetches the document and publishes it as a new version. Every replica
// loads the current version and reports it. The caller declares a version
// active once every live replica reports it loaded, or once a bounded time
// after its PublishedAt has passed, whichever comes first.
//
// Store is the contract; Memory is the single-replica implementation and
// Redis the one shared by all replicas. One contract suite runs on Memory,
// a standalone Redis and a Redis Cluster. The package imports only
// internal/redisx (which go-redis errors are outages); go-redis appears only in redis.go.
//
// # Redis layout
//
// Every key starts with the store's prefix. The pointer to the current
// version and the versions' bytes share the hash tag {doc}, so the script
// that publishes touches one Cluster slot; the replicas' reports share the
// tag {replicas}:
//
//	<prefix>{doc}:cur       hash: id = current version, at = its PublishedAt
//	                        (µs since the Unix epoch, Redis's clock),
//	                        prev = the version before it ("" for none)
//	<prefix>{doc}:d:<id>    string: the bytes of version <id>; only the
//	                        current and the previous version's exist
//	<prefix>{replicas}:ids  hash: replica → the version id it reports
//	<prefix>{replicas}:exp  sorted set: replica, scored by the expiry of its
//	                        report (µs since the Unix epoch, Redis's clock)
//
// Publish reads the pointer, then runs one script that checks the pointer
// is unchanged (else it retries with what it found), writes the new bytes,
// moves the pointer and deletes the bytes of the version that was previous
// until now. Every key a script touches is passed in KEYS. Report drops
// expired reports, and the two report keys expire with the latest report,
// so replicas that vanish without Leave leave nothing behind. Replicas
// reads only unexpired reports.
package documents
