package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSetContextBudgetApplies(t *testing.T) {
	s, _ := newTestSession(t, &scriptProvider{}, SessionConfig{})
	s.SetContextBudget(1234)
	assert.Equal(t, 1234, s.modes.contextBudget())
	s.SetContextBudget(-1)
	assert.Equal(t, 0, s.modes.contextBudget(), "negative: never shrink")
	s.SetContextBudget(0)
	assert.Equal(t, DefaultContextBudget, s.modes.contextBudget())
}
