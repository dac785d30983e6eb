package documents

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Implementations translate their own errors into these at
// the boundary so that callers can branch with errors.Is.
var (
	// ErrNotFound: the version was never published, or its bytes were
	// dropped because two newer versions were published since.
	ErrNotFound = errors.New("documents: version not found")
	// ErrUnavailable: the backing store cannot be reached. Outages wrap it.
	ErrUnavailable = errors.New("documents: store unavailable")
)

// MaxDocument is the largest document Publish accepts, in bytes.
const MaxDocument = 64 << 20

// Version names one published document.
type Version struct {
	// ID is the content hash chosen by the caller (e.g. "sha256:…").
	ID string
	// PublishedAt is when the version became current, on the store's clock
	// (Redis's for the Redis store), to the microsecond.
	PublishedAt time.Time
}

// Store keeps the current document version, its bytes, and which version
// every live replica has loaded. Every method is safe for concurrent use.
// Invalid arguments are plain errors (neither sentinel); a context that
// ends makes a method return the context's error itself.
type Store interface {
	// Publish stores doc under id and makes it the current version, unless
	// id is already current: then it returns the current Version and
	// changed=false, and stores nothing. Documents up to MaxDocument bytes.
	// The previous version's bytes are kept: at most two versions' bytes
	// are, the current and the previous one.
	Publish(ctx context.Context, id string, doc []byte) (v Version, changed bool, err error)
	// Current is the current version; ok=false when nothing was published.
	Current(ctx context.Context) (v Version, ok bool, err error)
	// Document returns the bytes of version id, or ErrNotFound.
	Document(ctx context.Context, id string) ([]byte, error)
	// Report records that replica has version id loaded and is alive, for
	// ttl (at least a millisecond). A report replaces the replica's last.
	Report(ctx context.Context, replica, id string, ttl time.Duration) error
	// Leave removes replica's report (graceful shutdown). Leaving without
	// a report does nothing.
	Leave(ctx context.Context, replica string) error
	// Replicas returns every live replica's reported version id, keyed by
	// replica.
	Replicas(ctx context.Context) (map[string]string, error)
}

func validateID(id string) error {
	if id == "" {
		return errors.New("documents: empty version id")
	}
	return nil
}

func validatePublish(id string, doc []byte) error {
	if err := validateID(id); err != nil {
		return err
	}
	if len(doc) > MaxDocument {
		return fmt.Errorf("documents: document of %d bytes exceeds the limit of %d", len(doc), MaxDocument)
	}
	return nil
}

func validateReplica(replica string) error {
	if replica == "" {
		return errors.New("documents: empty replica name")
	}
	return nil
}

func validateReport(replica, id string, ttl time.Duration) error {
	if err := validateReplica(replica); err != nil {
		return err
	}
	if err := validateID(id); err != nil {
		return err
	}
	if ttl < time.Millisecond {
		return fmt.Errorf("documents: report ttl %v is under a millisecond", ttl)
	}
	return nil
}
