package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSetContextBudgetApplies(t *testing.T) {
	s, _ := newTestSession(t, &scriptProvider{}, SessionConfig{})
	s.SetContextBudget(1234)
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Equal(t, 1234, s.budget())
	s.cfg.ContextBudget = -1
	assert.Equal(t, 0, s.budget(), "negative: never shrink")
	s.cfg.ContextBudget = 0
	assert.Equal(t, DefaultContextBudget, s.budget())
}
