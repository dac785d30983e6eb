package openapi

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValidatePanicIsAWarning(t *testing.T) {
	ws := validateWith(func() error { panic("nil pointer somewhere") })
	require.Equal(t, []Warning{{Location: "document", Message: "validation stopped early: kin-openapi failed: nil pointer somewhere"}}, ws)
	require.Empty(t, validateWith(func() error { return nil }))
}
