package permission

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPermissionsCorruptFileIsKeptAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "permissions.json")
	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o600))
	p, notice := OpenStore(path, nil)
	assert.Contains(t, notice, "moved to "+path+".corrupt-")
	assert.Empty(t, p.All())
	matches, _ := filepath.Glob(path + ".corrupt-*")
	assert.Len(t, matches, 1)
}
