package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/mcp-gateway/mcp-gateway/toolgen"
)

// config is everything the binary can be told. Every field is set through
// one entry of the options table below, from a flag, an environment
// variable or a key of the YAML file, in that order of precedence.
type config struct {
	ConfigFile string

	OpenAPI   string
	Upstream  string
	Demo      bool
	Listen    string
	MountPath string
	RedisURL  string

	RedisMode         string
	RedisUsername     string
	RedisPassword     string
	RedisPasswordFile string
	RedisTLSCAFile    string // empty: the system's roots verify the server
	RedisTLSCertFile  string // empty: no client certificate
	RedisTLSKeyFile   string
	RedisPrefix       string
	RedisTimeout      time.Duration
	StreamMaxEvents   int
	StreamMaxAge      time.Duration
	StreamMaxBytes    int64
	ToolCallRate      float64
	ToolCallBurst     int
	MaxConcurrent     int // -1: derived from BackendMaxResponse

	AllowedOrigins      []string
	AllowedHosts        []string
	SessionTTL          time.Duration
	SessionDelete       bool
	LegacySSE           bool
	LegacySSEPath       string
	LegacyMessagesPath  string
	LegacySSEGrace      time.Duration
	SSEKeepAlive        time.Duration
	PageSize            int
	MaxBodyBytes        int64
	MaxBatch            int
	MaxResponseBytes    int64
	ReadTimeout         time.Duration
	IdleTimeout         time.Duration
	ShutdownGrace       time.Duration
	LogLevel            string
	LogFormat           string
	Tracing             string // auto, otlp or off (tracing.go)
	Include, Exclude    []string
	MaxDescription      int
	MaxSchemaBytes      int64
	OutputSchema        string
	OpenAPITimeout      time.Duration
	OpenAPIWait         time.Duration // 0: a document that cannot be fetched stops the gateway at once
	OpenAPIMaxBytes     int64
	BackendTimeout      time.Duration
	BackendMaxResponse  int64
	BackendHeaders      map[string]string
	BackendAPIKeys      map[string]string
	BackendBearerToken  string
	BackendBearerFile   string
	BackendBearerAlways bool
	BackendErrorBody    string
	MaxRequestURL       int64

	// YAML-only list settings (config_lists.go, config_content.go).
	Operations []operationSetting
	Resources  []gateway.DeclaredResource
	Prompts    []gateway.DeclaredPrompt

	// The security settings (config_security.go).
	securityConfig
	watchConfig
	inputConfig
	apisConfig
}

// option is one configuration key. raw values are strings from flags and
// env, or YAML-decoded values (string, int, bool, []any, map[string]any).
type option struct {
	key   string // YAML key; flag is the key with - for _, env is MCPGW_ + upper key
	def   string // default, as documented
	usage string
	set   func(c *config, raw any) error
	// bool flags take no value on the command line.
	isBool bool
	// repeat: the flag may be given more than once (lists and maps).
	repeat bool
	// noYAML: the key cannot come from the YAML file (the file's own path).
	noYAML bool
	// tools: the tools subcommand reads it too (its --help lists it).
	tools bool
	// flag and env, when set, name the flag (without --) and the
	// environment variable instead of the names made from key.
	flag, env string
}

func (o option) flagName() string {
	if o.flag != "" {
		return o.flag
	}
	return strings.ReplaceAll(o.key, "_", "-")
}

func (o option) envName() string {
	if o.env != "" {
		return o.env
	}
	return "MCPGW_" + strings.ToUpper(o.key)
}

var options = []option{
	{key: "config", tools: true, usage: "YAML configuration file; flags and env override its keys", noYAML: true,
		set: str(func(c *config) *string { return &c.ConfigFile })},
	{key: "openapi", tools: true, usage: "file path or http(s) URL of the backend's OpenAPI document (2.0, 3.0 or 3.1, JSON or YAML)",
		set: str(func(c *config) *string { return &c.OpenAPI })},
	{key: "upstream", usage: "backend base URL (default: the document's first server URL)",
		set: urlValue(func(c *config) *string { return &c.Upstream })},
	{key: "demo", tools: true, def: "false", isBool: true, usage: "serve a bundled sample REST backend in-process on loopback (needs no --openapi)",
		set: boolean(func(c *config) *bool { return &c.Demo })},
	{key: "listen", def: "127.0.0.1:8080", usage: "listen address host:port",
		set: hostPort(func(c *config) *string { return &c.Listen })},
	{key: "mount_path", def: "/mcp", usage: "path the MCP endpoint is served on",
		set: path(func(c *config) *string { return &c.MountPath })},
	{key: "redis_url", usage: "Redis URL for shared state across replicas; empty means the embedded in-memory store (one replica)",
		set: str(func(c *config) *string { return &c.RedisURL })},
	{key: "redis_mode", def: "auto", usage: "how to read redis_url: auto, standalone, cluster or sentinel (auto: master_name=... means sentinel, addr=... cluster)",
		set: oneOf([]string{"auto", "standalone", "cluster", "sentinel"}, func(c *config) *string { return &c.RedisMode })},
	{key: "redis_username", usage: "Redis ACL user (overrides the URL's)",
		set: str(func(c *config) *string { return &c.RedisUsername })},
	{key: "redis_password", usage: "Redis password (overrides the URL's); prefer redis_password_file",
		set: str(func(c *config) *string { return &c.RedisPassword })},
	{key: "redis_password_file", usage: "file holding the Redis password (read at start)",
		set: str(func(c *config) *string { return &c.RedisPasswordFile })},
	{key: "redis_tls_ca_file", usage: "PEM file of the CAs that sign the Redis servers' certificates (default: the system's roots); needs a rediss:// redis_url",
		set: str(func(c *config) *string { return &c.RedisTLSCAFile })},
	{key: "redis_tls_cert_file", usage: "PEM client certificate for Redis servers that verify clients (tls-auth-clients); needs redis_tls_key_file and a rediss:// redis_url",
		set: str(func(c *config) *string { return &c.RedisTLSCertFile })},
	{key: "redis_tls_key_file", usage: "PEM private key of redis_tls_cert_file",
		set: str(func(c *config) *string { return &c.RedisTLSKeyFile })},
	{key: "redis_prefix", def: "mcpgw:", usage: "prefix of every Redis key and channel (lets gateways share a Redis)",
		set: str(func(c *config) *string { return &c.RedisPrefix })},
	{key: "redis_timeout", def: "1s", usage: "bound of every session-store and bus call: a request that needs Redis fails with 503 after it; calls on cached sessions do not wait for Redis at all",
		set: positiveDuration(func(c *config) *time.Duration { return &c.RedisTimeout })},
	{key: "stream_max_events", def: "1000", usage: "events kept per session push stream for Last-Event-ID replay",
		set: positiveInt(func(c *config) *int { return &c.StreamMaxEvents })},
	{key: "stream_max_age", def: "1h", usage: "oldest event kept per session push stream for replay",
		set: duration(func(c *config) *time.Duration { return &c.StreamMaxAge })},
	{key: "stream_max_bytes", def: "256KiB", usage: "bytes kept per session push stream for replay (the oldest events go first)",
		set: size(func(c *config) *int64 { return &c.StreamMaxBytes })},
	{key: "tool_call_rate", def: "0", usage: "tools/call per second allowed per session (stateless era: per client address); 0 means unlimited",
		set: nonNegativeFloat(func(c *config) *float64 { return &c.ToolCallRate })},
	{key: "tool_call_burst", def: "10", usage: "tools/call a client may make at once before tool_call_rate applies",
		set: positiveInt(func(c *config) *int { return &c.ToolCallBurst })},
	{key: "max_concurrent_calls", def: "auto", usage: "tool calls running at once per replica; beyond it a call waits up to 1s, then gets a busy tool error with retryAfterSeconds; auto = a 1 GiB budget / (3 × backend_max_response_bytes), at least 4 (34 by default); 0 = unlimited",
		set: func(c *config, raw any) error {
			s, err := scalar(raw)
			if err != nil {
				return err
			}
			if s == "auto" {
				c.MaxConcurrent = -1
				return nil
			}
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return fmt.Errorf("must be auto, 0 (unlimited) or a positive number, got %q", s)
			}
			c.MaxConcurrent = n
			return nil
		}},
	{key: "allowed_origins", repeat: true, usage: "Origin values browsers may send (comma-separated; * for any); empty means loopback origins when listening on loopback",
		set: list(func(c *config) *[]string { return &c.AllowedOrigins })},
	{key: "allowed_hosts", repeat: true, usage: "extra Host names accepted when listening on loopback (DNS-rebinding protection)",
		set: list(func(c *config) *[]string { return &c.AllowedHosts })},
	{key: "session_ttl", def: "30m", usage: "idle lifetime of a session",
		set: duration(func(c *config) *time.Duration { return &c.SessionTTL })},
	{key: "session_delete", def: "true", isBool: true, usage: "let clients end sessions with DELETE (false: 405)",
		set: boolean(func(c *config) *bool { return &c.SessionDelete })},
	{key: "legacy_sse", def: "true", isBool: true, usage: "serve the 2024-11-05 HTTP+SSE transport for clients that speak nothing newer (false: its paths answer 404)",
		set: boolean(func(c *config) *bool { return &c.LegacySSE })},
	{key: "legacy_sse_path", usage: "where 2024-11-05 clients open their event stream (default: mount_path + /sse)",
		set: optionalPath(func(c *config) *string { return &c.LegacySSEPath })},
	{key: "legacy_messages_path", usage: "where 2024-11-05 clients POST their messages (default: mount_path + /messages)",
		set: optionalPath(func(c *config) *string { return &c.LegacyMessagesPath })},
	{key: "legacy_sse_grace", def: "30s", usage: "how long a 2024-11-05 session outlives its closed event stream, for the client to reconnect with Last-Event-ID",
		set: positiveDuration(func(c *config) *time.Duration { return &c.LegacySSEGrace })},
	{key: "sse_keepalive", def: "15s", usage: "interval of keep-alive comments on idle SSE streams (0 disables)",
		set: duration(func(c *config) *time.Duration { return &c.SSEKeepAlive })},
	{key: "page_size", tools: true, def: "100", usage: "tools per tools/list page",
		set: positiveInt(func(c *config) *int { return &c.PageSize })},
	{key: "max_body_bytes", def: "4MiB", usage: "largest accepted POST body (413 beyond)",
		set: size(func(c *config) *int64 { return &c.MaxBodyBytes })},
	{key: "max_batch", def: "50", usage: "most messages in one JSON-RPC batch (2025-03-26 sessions); more is one -32600 error",
		set: positiveInt(func(c *config) *int { return &c.MaxBatch })},
	{key: "max_response_bytes", def: "16MiB", usage: "largest answer to a batch; members beyond it get an error instead of their result",
		set: size(func(c *config) *int64 { return &c.MaxResponseBytes })},
	{key: "read_timeout", def: "30s", usage: "how long a request body may take to arrive, from the end of its headers (a trickled body is cut off with 408; headers get at most 10s, never more than this); streams the gateway sends are not affected",
		set: positiveDuration(func(c *config) *time.Duration { return &c.ReadTimeout })},
	{key: "idle_timeout", def: "2m", usage: "how long an idle keep-alive connection stays open",
		set: positiveDuration(func(c *config) *time.Duration { return &c.IdleTimeout })},
	{key: "shutdown_grace", def: "15s", usage: "how long in-flight calls may finish after SIGTERM/SIGINT",
		set: duration(func(c *config) *time.Duration { return &c.ShutdownGrace })},
	{key: "log_level", tools: true, def: "info", usage: "gateway log level: debug, info, warn, error",
		set: oneOf([]string{"debug", "info", "warn", "error"}, func(c *config) *string { return &c.LogLevel })},
	{key: "log_format", tools: true, def: "text", usage: "gateway log format: text or json",
		set: oneOf([]string{"text", "json"}, func(c *config) *string { return &c.LogFormat })},
	{key: "include", tools: true, repeat: true, usage: "keep only operations matching these globs over operationId, tag or path (comma-separated)",
		set: list(func(c *config) *[]string { return &c.Include })},
	{key: "exclude", tools: true, repeat: true, usage: "drop operations matching these globs over operationId, tag or path (comma-separated)",
		set: list(func(c *config) *[]string { return &c.Exclude })},
	{key: "max_description", tools: true, def: "1024", usage: "longest tool description in characters",
		set: positiveInt(func(c *config) *int { return &c.MaxDescription })},
	{key: "max_schema_bytes", tools: true, def: "32KiB", usage: "largest inputSchema or outputSchema of one tool; a bigger one is simplified step by step (deep descriptions dropped, then deep levels cut, with a note); 0 means no bound",
		set: sizeOrZero(func(c *config) *int64 { return &c.MaxSchemaBytes })},
	{key: "output_schema", tools: true, def: "lenient", usage: "outputSchema of the tools: lenient (the response's shape without the constraints backends break), strict (the document's schema) or off; an operation's x-mcp-output-schema wins",
		set: oneOf([]string{"lenient", "strict", "off"}, func(c *config) *string { return &c.OutputSchema })},
	{key: "openapi_timeout", tools: true, def: "30s", usage: "timeout for fetching the OpenAPI document and its external $refs",
		set: duration(func(c *config) *time.Duration { return &c.OpenAPITimeout })},
	{key: "openapi_max_bytes", tools: true, def: "64MiB", usage: "largest OpenAPI document (or referenced file) accepted",
		set: size(func(c *config) *int64 { return &c.OpenAPIMaxBytes })},
	{key: "backend_timeout", def: "30s", usage: "timeout of one backend call",
		set: duration(func(c *config) *time.Duration { return &c.BackendTimeout })},
	{key: "backend_max_response_bytes", def: "10MiB", usage: "largest backend response read; larger ones are a tool error",
		set: size(func(c *config) *int64 { return &c.BackendMaxResponse })},
	{key: "backend_headers", repeat: true, usage: "static headers sent to the backend: Name=value (comma-separated in env; a YAML map)",
		set: kv(func(c *config) *map[string]string { return &c.BackendHeaders })},
	{key: "backend_api_keys", repeat: true, usage: "API keys by security scheme name: scheme=value, placed where the scheme says (header, query or cookie)",
		set: kv(func(c *config) *map[string]string { return &c.BackendAPIKeys })},
	{key: "backend_bearer_token", usage: "bearer token for operations secured by http bearer, oauth2 or openIdConnect schemes",
		set: str(func(c *config) *string { return &c.BackendBearerToken })},
	{key: "backend_bearer_token_file", usage: "file holding the bearer token (read at start); conflicts with backend_bearer_token",
		set: str(func(c *config) *string { return &c.BackendBearerFile })},
	{key: "max_request_url_bytes", def: "8KiB", usage: "longest backend request URL (path and query); arguments that make it longer are a tool error naming the argument, and nothing is sent",
		set: size(func(c *config) *int64 { return &c.MaxRequestURL })},
	{key: "backend_error_body", def: "excerpt", usage: "what a backend error's body adds to the tool error: excerpt (4xx bodies only, without lines that look like stack frames, paths, internal addresses or credentials), all (5xx too, the same way) or none (the status only)",
		set: oneOf([]string{"excerpt", "all", "none"}, func(c *config) *string { return &c.BackendErrorBody })},
	{key: "backend_bearer_always", def: "false", isBool: true, usage: "send the bearer token on every backend call, also to operations with no declared security",
		set: boolean(func(c *config) *bool { return &c.BackendBearerAlways })},
}

// configError names the bad key and why; main prints it on one line and
// exits with status 2.
type configError struct {
	key    string
	source string
	reason string
}

func (e *configError) Error() string {
	return fmt.Sprintf("invalid configuration: %s (%s): %s", e.key, e.source, e.reason)
}

// loadConfig builds the configuration from defaults, the YAML file, the
// environment and the command line, in rising precedence.
func loadConfig(name string, args []string, getenv func(string) string, stderr io.Writer) (*config, *flag.FlagSet, error) {
	c := &config{}
	for _, o := range options {
		if o.def != "" {
			if err := o.set(c, o.def); err != nil {
				panic(fmt.Sprintf("default of %s: %v", o.key, err))
			}
		}
	}

	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cli := map[string][]string{}
	for _, o := range options {
		o := o
		usage := o.usage + " (env " + o.envName() + ")"
		if o.isBool {
			fs.Func(o.flagName(), usage, func(v string) error { cli[o.key] = append(cli[o.key], v); return nil })
			setBoolFlag(fs, o.flagName())
			continue
		}
		fs.Func(o.flagName(), usage, func(v string) error { cli[o.key] = append(cli[o.key], v); return nil })
	}
	showVersion := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() { printUsage(stderr, name) }
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	if *showVersion {
		return nil, nil, errVersion
	}
	if fs.NArg() > 0 {
		return nil, nil, &configError{key: fs.Arg(0), source: "command line", reason: "unexpected argument"}
	}

	// The file's path itself comes from the flag or env only.
	file := getenv("MCPGW_CONFIG")
	if v := cli["config"]; len(v) > 0 {
		file = v[len(v)-1]
	}
	if file != "" {
		if err := applyYAML(c, file); err != nil {
			return nil, nil, err
		}
		c.ConfigFile = file
	}
	for _, o := range options {
		if v := getenv(o.envName()); v != "" && !o.noYAML {
			if err := o.set(c, v); err != nil {
				return nil, nil, &configError{key: o.envName(), source: "environment", reason: err.Error()}
			}
		}
	}
	for _, o := range options {
		vals, ok := cli[o.key]
		if !ok || o.noYAML {
			continue
		}
		if o.repeat {
			// Repeated flags add up: --backend-headers A=1 --backend-headers B=2.
			if err := o.set(c, strings.Join(vals, "\x00")); err != nil {
				return nil, nil, &configError{key: "--" + o.flagName(), source: "command line", reason: err.Error()}
			}
			continue
		}
		if err := o.set(c, vals[len(vals)-1]); err != nil {
			return nil, nil, &configError{key: "--" + o.flagName(), source: "command line", reason: err.Error()}
		}
	}
	if err := c.validate(); err != nil {
		return c, fs, err
	}
	return c, fs, c.resolveAPIs(c.fileName())
}

// validate checks what no single key can check alone.
func (c *config) validate() error {
	switch {
	case c.Demo && c.OpenAPI != "":
		return &configError{key: "demo", source: "combined", reason: "--demo serves its own document; do not also set openapi"}
	case c.Demo && c.Upstream != "":
		return &configError{key: "demo", source: "combined", reason: "--demo serves its own backend; do not also set upstream"}
	case !c.Demo && c.OpenAPI == "" && c.apisRaw == nil:
		return &configError{key: "openapi", source: "combined", reason: "required (or use --demo)"}
	case c.BackendBearerToken != "" && c.BackendBearerFile != "":
		return &configError{key: "backend_bearer_token_file", source: "combined", reason: "set either backend_bearer_token or backend_bearer_token_file, not both"}
	case c.RedisPassword != "" && c.RedisPasswordFile != "":
		return &configError{key: "redis_password_file", source: "combined", reason: "set either redis_password or redis_password_file, not both"}
	}
	if err := toolgen.ValidNamePrefix(c.ToolPrefix); err != nil {
		return &configError{key: "tool_prefix", source: "combined", reason: err.Error()}
	}
	if err := toolgen.ValidToolsets(c.Toolsets); err != nil {
		return &configError{key: "toolsets", source: "combined", reason: err.Error()}
	}
	return c.validateSecurity()
}

// applyYAML reads the configuration file. Unknown keys are errors.
func applyYAML(c *config, file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return &configError{key: "config", source: file, reason: "cannot read: " + errors.Unwrap(err).Error()}
	}
	var doc map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return &configError{key: "config", source: file, reason: "not valid YAML: " + err.Error()}
	}
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := setKey(c, k, doc[k]); err != nil {
			return keyError(err, k, "", file)
		}
	}
	return nil
}

// Value parsers: each accepts a string (flag or env) or a YAML value.

func scalar(raw any) (string, error) {
	switch v := raw.(type) {
	case string:
		return v, nil
	case int, int64, float64, bool:
		return fmt.Sprint(v), nil
	}
	return "", fmt.Errorf("must be a single value, not %T", raw)
}

func str[C any](field func(*C) *string) func(*C, any) error {
	return func(c *C, raw any) error {
		s, err := scalar(raw)
		if err != nil {
			return err
		}
		*field(c) = s
		return nil
	}
}

func urlValue[C any](field func(*C) *string) func(*C, any) error {
	return func(c *C, raw any) error {
		s, err := scalar(raw)
		if err != nil {
			return err
		}
		if s != "" {
			u, err := url.Parse(s)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("must be an http(s) URL with a host, got %q", s)
			}
		}
		*field(c) = s
		return nil
	}
}

func hostPort[C any](field func(*C) *string) func(*C, any) error {
	return func(c *C, raw any) error {
		s, err := scalar(raw)
		if err != nil {
			return err
		}
		if _, port, err := net.SplitHostPort(s); err != nil || port == "" {
			return fmt.Errorf("must be host:port, got %q", s)
		}
		*field(c) = s
		return nil
	}
}

func path[C any](field func(*C) *string) func(*C, any) error {
	return func(c *C, raw any) error {
		s, err := scalar(raw)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(s, "/") || strings.ContainsAny(s, "?#* {}") {
			return fmt.Errorf("must be a URL path starting with /, got %q", s)
		}
		*field(c) = s
		return nil
	}
}

// optionalPath is path where empty means "the default".
func optionalPath[C any](field func(*C) *string) func(*C, any) error {
	p := path(field)
	return func(c *C, raw any) error {
		if s, err := scalar(raw); err == nil && s == "" {
			*field(c) = ""
			return nil
		}
		return p(c, raw)
	}
}

func boolean[C any](field func(*C) *bool) func(*C, any) error {
	return func(c *C, raw any) error {
		s, err := scalar(raw)
		if err != nil {
			return err
		}
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("must be true or false, got %q", s)
		}
		*field(c) = b
		return nil
	}
}

func duration[C any](field func(*C) *time.Duration) func(*C, any) error {
	return func(c *C, raw any) error {
		s, err := scalar(raw)
		if err != nil {
			return err
		}
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return fmt.Errorf("must be a duration such as 30s or 5m, got %q", s)
		}
		*field(c) = d
		return nil
	}
}

func positiveInt[C any](field func(*C) *int) func(*C, any) error {
	return func(c *C, raw any) error {
		s, err := scalar(raw)
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return fmt.Errorf("must be a positive whole number, got %q", s)
		}
		*field(c) = n
		return nil
	}
}

func nonNegativeFloat[C any](field func(*C) *float64) func(*C, any) error {
	return func(c *C, raw any) error {
		s, err := scalar(raw)
		if err != nil {
			return err
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("must be a number of at least 0, got %q", s)
		}
		*field(c) = f
		return nil
	}
}

// size parses byte sizes: 1048576, 512KiB, 4MiB, 1GiB (also KB/MB/GB as
// powers of 1000).
// sizeOrZero is size where 0 is allowed too (it means "no bound").
func sizeOrZero[C any](field func(*C) *int64) func(*C, any) error {
	positive := size(field)
	return func(c *C, raw any) error {
		if s, err := scalar(raw); err == nil && strings.TrimSpace(s) == "0" {
			*field(c) = 0
			return nil
		}
		return positive(c, raw)
	}
}

func size[C any](field func(*C) *int64) func(*C, any) error {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"B", 1}}
	return func(c *C, raw any) error {
		s, err := scalar(raw)
		if err != nil {
			return err
		}
		num, mult := strings.TrimSpace(s), int64(1)
		for _, u := range units {
			if strings.HasSuffix(num, u.suffix) {
				num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
				break
			}
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("must be a positive size such as 4MiB or 1048576, got %q", s)
		}
		*field(c) = n * mult
		return nil
	}
}

func oneOf[C any](allowed []string, field func(*C) *string) func(*C, any) error {
	return func(c *C, raw any) error {
		s, err := scalar(raw)
		if err != nil {
			return err
		}
		if !slices.Contains(allowed, s) {
			return fmt.Errorf("must be one of %s, got %q", strings.Join(allowed, ", "), s)
		}
		*field(c) = s
		return nil
	}
}

// splitList splits a flag/env list: commas, or NULs between repeated flags.
func splitList(s string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == 0 }) {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func list[C any](field func(*C) *[]string) func(*C, any) error {
	return func(c *C, raw any) error {
		var out []string
		switch v := raw.(type) {
		case []any:
			for _, item := range v {
				s, err := scalar(item)
				if err != nil {
					return fmt.Errorf("list items must be strings: %w", err)
				}
				out = append(out, s)
			}
		default:
			s, err := scalar(raw)
			if err != nil {
				return err
			}
			out = splitList(s)
		}
		*field(c) = out
		return nil
	}
}

// kv parses Name=value pairs. In flags and env they are comma-separated
// with values URL-decoded (so a value can hold %2C for a comma), as in
// OTEL_EXPORTER_OTLP_HEADERS; in YAML they are a map.
func kv[C any](field func(*C) *map[string]string) func(*C, any) error {
	return func(c *C, raw any) error {
		out := map[string]string{}
		switch v := raw.(type) {
		case map[string]any:
			for k, val := range v {
				s, err := scalar(val)
				if err != nil {
					return fmt.Errorf("value of %q: %w", k, err)
				}
				out[k] = s
			}
		default:
			s, err := scalar(raw)
			if err != nil {
				return err
			}
			for _, pair := range splitList(s) {
				k, val, ok := strings.Cut(pair, "=")
				k = strings.TrimSpace(k)
				if !ok || k == "" {
					return fmt.Errorf("must be Name=value pairs, got %q", pair)
				}
				dec, err := url.QueryUnescape(strings.TrimSpace(val))
				if err != nil {
					return fmt.Errorf("value of %q is not URL-encoded correctly", k)
				}
				out[k] = dec
			}
		}
		*field(c) = out
		return nil
	}
}

// setBoolFlag lets "--demo" stand alone, like flag.Bool does.
func setBoolFlag(fs *flag.FlagSet, name string) {
	f := fs.Lookup(name)
	f.Value = boolFlag{f.Value}
}

type boolFlag struct{ flag.Value }

func (boolFlag) IsBoolFlag() bool { return true }

// errVersion is loadConfig's answer to --version: print it, exit 0.
var errVersion = errors.New("version requested")

// toolsCommand is the tools subcommand's name, as loadConfig is given it.
const toolsCommand = "mcp-gateway tools"

// printUsage lists the flags the command reads: every option for the
// server, the ones marked tools for the tools subcommand.
func printUsage(w io.Writer, name string) {
	tools := name == toolsCommand
	if tools {
		fmt.Fprintf(w, "Usage: %s (--openapi DOC | --demo) [--format json|table] [flags]\n\n", name)
		fmt.Fprintln(w, "Prints what tools/list returns, and the document's warnings, then exits (0 when the document loads).")
	} else {
		fmt.Fprintf(w, "Usage: %s [flags]\n       %s [flags]\n       %s\n\n", name, toolsCommand+" --openapi DOC [--format json|table]", demoClusterCommand+" [--listen ADDR] [--replicas N] (a local cluster: Redis, 3 replicas, a proxy)")
		fmt.Fprintln(w, "Serves MCP (every revision, one endpoint) in front of a REST backend described by OpenAPI.")
	}
	fmt.Fprintln(w, "Precedence: flags > environment > YAML file (--config) > defaults.")
	fmt.Fprintln(w)
	if tools {
		fmt.Fprintf(w, "  --format\n        json (exactly what tools/list returns, all pages as one list) or table (default table)\n")
	}
	fmt.Fprintf(w, "  --version\n        print the version and exit\n")
	for _, o := range options {
		if tools && !o.tools {
			continue
		}
		def := ""
		if o.def != "" {
			def = " (default " + o.def + ")"
		}
		fmt.Fprintf(w, "  --%s\n        %s%s\n        env %s", o.flagName(), o.usage, def, o.envName())
		if !o.noYAML {
			fmt.Fprintf(w, ", YAML key %s", o.key)
		}
		fmt.Fprintln(w)
	}
}
