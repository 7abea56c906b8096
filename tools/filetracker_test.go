package tools

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFileTrackerSnapshotReplace(t *testing.T) {
	ft := NewFileTracker(map[string]string{"a": "1"})
	snap := ft.Snapshot()
	snap["b"] = "2"
	_, ok := ft.Seen("b")
	assert.False(t, ok, "a snapshot is a copy")
	ft.Replace(snap)
	h, ok := ft.Seen("b")
	assert.True(t, ok)
	assert.Equal(t, "2", h)
	var none *FileTracker
	none.Saw("x", "y")
	_, ok = none.Seen("x")
	assert.False(t, ok)
}
