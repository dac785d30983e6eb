package call

// Stage is a step of one backend exchange, in the order they happen.
type Stage int

const (
	// StageSent: the arguments were valid and the request has been sent.
	StageSent Stage = iota + 1
	// StageAnswered: the backend's status line and headers arrived.
	StageAnswered
	// StageMapped: the response body was read and mapped to a result.
	StageMapped
)

// StageCount is the number of stages a successful exchange goes through.
const StageCount = int(StageMapped)

// Progress reports one stage of a call. Status is the backend's HTTP status
// from StageAnswered on.
type Progress struct {
	Stage  Stage
	Status int
}

// Observer receives the stages of a call; the gateway turns them into MCP
// progress and log notifications.
type Observer func(Progress)
