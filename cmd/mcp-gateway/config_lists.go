package main

// Settings that are lists of objects (the declared operations today; the
// declared resources, prompts, quotas and per-tool limits later) live in the
// YAML file only: a flag or an environment variable cannot spell them
// readably. Each is a typed struct whose fields are declared in a table
// like the scalar options, parsed by the same value parsers, and validated
// here, in one place, with errors that name the key path
// (operations[2].backend_timeout: ...). Checks that need the loaded
// document (does the tool exist?) run once it is loaded and name the path
// the same way (see checkOperations).

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"
)

// listOption is one YAML-only key whose value is a list of objects.
type listOption struct {
	key   string
	usage string
	set   func(c *config, raw any) error
}

var listOptions = []listOption{
	{key: "operations", usage: "per-operation overrides, by tool name (see `mcp-gateway tools`)",
		set: func(c *config, raw any) error {
			items, err := decodeList("operations", raw, operationFields)
			if err != nil {
				return err
			}
			seen := map[string]int{}
			for i, op := range items {
				if j, dup := seen[op.Tool]; dup {
					return &pathError{path: fmt.Sprintf("operations[%d].tool", i), reason: fmt.Sprintf("%q is already configured by operations[%d]", op.Tool, j)}
				}
				seen[op.Tool] = i
			}
			c.Operations = items
			return nil
		}},
}

// operationSetting overrides settings for one operation, named by its
// tool name.
type operationSetting struct {
	// Tool is the tool's name as tools/list shows it. Required.
	Tool string
	// BackendTimeout overrides backend_timeout and the operation's
	// x-mcp-timeout. Zero means not overridden.
	BackendTimeout time.Duration
}

var operationFields = []listField[operationSetting]{
	{key: "tool", required: true, usage: "the tool's name as `mcp-gateway tools` prints it",
		set: str(func(o *operationSetting) *string { return &o.Tool })},
	{key: "backend_timeout", usage: "timeout of this operation's backend calls (overrides backend_timeout and x-mcp-timeout)",
		set: positiveDuration(func(o *operationSetting) *time.Duration { return &o.BackendTimeout })},
}

// listField is one field of the objects of a list setting.
type listField[T any] struct {
	key      string
	required bool
	usage    string
	set      func(*T, any) error
}

// pathError is an invalid value inside a list setting: the key path names
// the item and the field.
type pathError struct {
	path   string
	reason string
}

func (e *pathError) Error() string { return e.path + ": " + e.reason }

// decodeList reads a YAML list of objects into items, field by field.
// Unknown fields, missing required ones and bad values are errors naming
// their path.
func decodeList[T any](key string, raw any, fields []listField[T]) ([]T, error) {
	list, ok := raw.([]any)
	if !ok {
		return nil, &pathError{path: key, reason: "must be a list of objects"}
	}
	items := make([]T, 0, len(list))
	for i, rawItem := range list {
		at := fmt.Sprintf("%s[%d]", key, i)
		obj, ok := rawItem.(map[string]any)
		if !ok {
			return nil, &pathError{path: at, reason: "must be an object"}
		}
		names := make([]string, 0, len(obj))
		for name := range obj {
			names = append(names, name)
		}
		sort.Strings(names)
		var item T
		for _, name := range names {
			j := slices.IndexFunc(fields, func(f listField[T]) bool { return f.key == name })
			if j < 0 {
				return nil, &pathError{path: at + "." + name, reason: "unknown key (known: " + fieldNames(fields) + ")"}
			}
			if obj[name] == nil {
				continue
			}
			if err := fields[j].set(&item, obj[name]); err != nil {
				return nil, &pathError{path: at + "." + name, reason: err.Error()}
			}
		}
		for _, f := range fields {
			if v, ok := obj[f.key]; f.required && (!ok || v == nil || v == "") {
				return nil, &pathError{path: at + "." + f.key, reason: "required"}
			}
		}
		items = append(items, item)
	}
	return items, nil
}

func fieldNames[T any](fields []listField[T]) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.key
	}
	return strings.Join(names, ", ")
}

// positiveDuration is duration that refuses zero.
func positiveDuration[C any](field func(*C) *time.Duration) func(*C, any) error {
	parse := duration(field)
	return func(c *C, raw any) error {
		if err := parse(c, raw); err != nil {
			return err
		}
		if *field(c) == 0 {
			return fmt.Errorf("must be more than 0, got %v", raw)
		}
		return nil
	}
}

// checkOperations checks the operations setting against the generated
// tools: every entry must name one. It returns the per-tool timeouts.
func checkOperations(c *config, hasTool func(string) bool) (map[string]time.Duration, error) {
	timeouts := map[string]time.Duration{}
	for i, op := range c.Operations {
		if !hasTool(op.Tool) {
			return nil, &configError{key: fmt.Sprintf("operations[%d].tool", i), source: c.fileName(),
				reason: fmt.Sprintf("no tool named %q in the document (after include/exclude); `mcp-gateway tools` lists them", op.Tool)}
		}
		if op.BackendTimeout > 0 {
			timeouts[op.Tool] = op.BackendTimeout
		}
	}
	return timeouts, nil
}

// checkContentOperations checks that the tools the declared resources and
// prompts call exist: method knows tools and resource operations (their
// HTTP method). A resource is read and polled, and completion asks on
// every keystroke: those must be GETs, never an operation that acts.
func checkContentOperations(c *config, method func(string) (string, bool)) error {
	check := func(at, name string, getOnly bool) error {
		m, ok := method(name)
		switch {
		case !ok:
			return &configError{key: at, source: c.fileName(),
				reason: fmt.Sprintf("no tool named %q in the document (after include/exclude); `mcp-gateway tools` lists them", name)}
		case getOnly && m != http.MethodGet:
			return &configError{key: at, source: c.fileName(),
				reason: fmt.Sprintf("%q is a %s operation: only a GET may be read as a resource or asked for completions", name, m)}
		}
		return nil
	}
	for i, r := range c.Resources {
		if r.Operation != "" {
			if err := check(fmt.Sprintf("resources[%d].operation", i), r.Operation, true); err != nil {
				return err
			}
		}
	}
	for i, p := range c.Prompts {
		for j, a := range p.Arguments {
			if a.ValuesFrom != nil {
				if err := check(fmt.Sprintf("prompts[%d].arguments[%d].values.operation", i, j), a.ValuesFrom.Operation, true); err != nil {
					return err
				}
			}
		}
		for j, m := range p.Messages {
			if m.Operation != nil {
				if err := check(fmt.Sprintf("prompts[%d].messages[%d].operation.name", i, j), m.Operation.Name, false); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (c *config) fileName() string {
	if c.ConfigFile == "" {
		return "config file"
	}
	return c.ConfigFile
}
