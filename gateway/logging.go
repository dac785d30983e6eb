package gateway

// logLevel is an MCP log level (RFC 5424 order, debug lowest).
type logLevel int

const (
	levelDebug logLevel = iota
	levelInfo
	levelNotice
	levelWarning
	levelError
	levelCritical
	levelAlert
	levelEmergency
	// levelOff: the client asked for no log messages.
	levelOff logLevel = 100
)

var levelNames = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func parseLogLevel(s string) (logLevel, bool) {
	for i, n := range levelNames {
		if n == s {
			return logLevel(i), true
		}
	}
	return 0, false
}

func (l logLevel) String() string {
	if l >= 0 && int(l) < len(levelNames) {
		return levelNames[l]
	}
	return "off"
}

// logMessage is the params of notifications/message.
type logMessage struct {
	Level  string `json:"level"`
	Logger string `json:"logger,omitempty"`
	Data   any    `json:"data"`
}
