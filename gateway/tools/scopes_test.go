package tools

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSatisfiesAndStepUp(t *testing.T) {
	for _, tc := range []struct {
		name    string
		granted []string
		alts    [][]string
		ok      bool
		stepUp  []string
	}{
		{name: "no requirement", ok: true},
		{name: "no requirement, empty list", alts: [][]string{}, ok: true},
		{name: "optional security {}", alts: [][]string{{"a"}, {}}, ok: true},
		{name: "one scope held", granted: []string{"a"}, alts: [][]string{{"a"}}, ok: true},
		{name: "one scope missing", granted: []string{"b"}, alts: [][]string{{"a"}}, stepUp: []string{"a"}},
		{name: "nothing granted", alts: [][]string{{"a", "b"}}, stepUp: []string{"a", "b"}},
		{name: "AND: all held", granted: []string{"c", "b", "a"}, alts: [][]string{{"a", "b"}}, ok: true},
		{name: "AND: one missing, whole set asked", granted: []string{"a"}, alts: [][]string{{"a", "b"}}, stepUp: []string{"a", "b"}},
		{name: "OR: second held", granted: []string{"x"}, alts: [][]string{{"a"}, {"x"}}, ok: true},
		{name: "OR: closest wins", granted: []string{"a", "b"}, alts: [][]string{{"x", "y"}, {"a", "b", "c"}}, stepUp: []string{"a", "b", "c"}},
		{name: "OR: tie goes to the first", granted: []string{"q"}, alts: [][]string{{"a", "b"}, {"c", "d"}}, stepUp: []string{"a", "b"}},
		{name: "OR: fewer missing beats shorter", granted: []string{"a", "b", "c"}, alts: [][]string{{"x"}, {"a", "b", "c", "d"}, {"y"}}, stepUp: []string{"x"}},
		{name: "duplicates dropped", alts: [][]string{{"a", "a", "b"}}, stepUp: []string{"a", "b"}},
		{name: "case matters", granted: []string{"A"}, alts: [][]string{{"a"}}, stepUp: []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.ok, satisfies(tc.granted, tc.alts))
			require.Equal(t, tc.stepUp, stepUp(tc.granted, tc.alts))
		})
	}
}

func TestStepUpDoesNotAlias(t *testing.T) {
	alts := [][]string{{"a", "b"}}
	got := stepUp(nil, alts)
	got[0] = "z"
	require.Equal(t, [][]string{{"a", "b"}}, alts)
}

func TestSatisfiesAllocatesNothing(t *testing.T) {
	granted := []string{"a", "b", "c"}
	alts := [][]string{{"x", "y"}, {"c", "a"}}
	require.Zero(t, testing.AllocsPerRun(100, func() { satisfies(granted, alts) }))
}
