package workspace

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools/secret"
)

func TestStateFilesAreWrittenRedacted(t *testing.T) {
	const key = "sk-or-v1-state-file-leak-0123456789"
	secret.Add(key)
	path := t.TempDir() + "/snap.json"
	require.NoError(t, WriteStateFile(path, []byte(`{"content":"`+key+`"}`), 0o600))
	assert.Equal(t, `{"content":"[redacted]"}`, readFileString(t, path))
}

func readFileString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
