package mcp

// LogLevel is an MCP log level (RFC 5424 order, debug lowest).
type LogLevel int

const (
	LevelDebug LogLevel = iota
	LevelInfo
	LevelNotice
	LevelWarning
	LevelError
	LevelCritical
	LevelAlert
	LevelEmergency
	// LevelOff: the client asked for no log messages.
	LevelOff LogLevel = 100
)

// LevelNames are the levels' wire names, lowest first.
var LevelNames = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// ParseLogLevel reads a level's wire name.
func ParseLogLevel(s string) (LogLevel, bool) {
	for i, n := range LevelNames {
		if n == s {
			return LogLevel(i), true
		}
	}
	return 0, false
}

func (l LogLevel) String() string {
	if l >= 0 && int(l) < len(LevelNames) {
		return LevelNames[l]
	}
	return "off"
}

// LogMessage is the params of notifications/message.
type LogMessage struct {
	Level  string `json:"level"`
	Logger string `json:"logger,omitempty"`
	Data   any    `json:"data"`
}
