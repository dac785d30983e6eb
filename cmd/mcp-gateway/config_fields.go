package main

// Which key sets which field of config: a reload compares configurations
// field by field and names what changed by key.

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// configField is one leaf field of config and the key that sets it.
type configField struct {
	index []int
	key   string
}

var (
	fieldsOnce sync.Once
	fields     []configField
)

// configFields lists config's exported leaf fields (embedded structs
// flattened) with their keys: found by setting each option on an empty
// configuration and seeing which field it changes; a field no option
// sets that way (the YAML-only lists) is its name in snake case.
func configFields() []configField {
	fieldsOnce.Do(func() {
		var walk func(t reflect.Type, prefix []int)
		walk = func(t reflect.Type, prefix []int) {
			for i := range t.NumField() {
				f := t.Field(i)
				idx := append(slices.Clip(prefix), i)
				switch {
				case f.Anonymous && f.Type.Kind() == reflect.Struct:
					walk(f.Type, idx)
				case f.IsExported() && f.Name != "ConfigFile" && f.Name != "APIs":
					fields = append(fields, configField{index: idx, key: snake(f.Name)})
				}
			}
		}
		walk(reflect.TypeFor[config](), nil)
		probes := []string{"true", "7", "0.5", "127.0.0.1:7", "/p", "http://h.example", "7s", "a=b", "x"}
		for _, o := range options {
			if o.noYAML {
				continue
			}
			for _, p := range append([]string{o.def}, probes...) {
				var c config
				if p == "" || o.set(&c, p) != nil {
					continue
				}
				zero, set := reflect.ValueOf(config{}), reflect.ValueOf(c)
				found := false
				for i := range fields {
					if !reflect.DeepEqual(zero.FieldByIndex(fields[i].index).Interface(), set.FieldByIndex(fields[i].index).Interface()) {
						fields[i].key, found = o.key, true
					}
				}
				if found {
					break
				}
			}
		}
	})
	return fields
}

// snake is a Go field name in snake case: ToolLimits → tool_limits.
func snake(name string) string {
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) && i > 0 && !unicode.IsUpper(rune(name[i-1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
