package sandbox

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestSeatbeltProfileGolden(t *testing.T) {
	home := "/Users/ann"
	base := Policy{Workspace: "/Users/ann/src/app", TempDir: "/private/tmp/fido-1", Deny: DefaultDeny(home, "/Users/ann/.local/state/fido", "", false)}
	readOnly := base
	readOnly.ReadOnly = true
	network := base
	network.Network, network.GitWritable = true, true
	network.UnixSockets = []string{`/Users/ann/agent "q".sock`}
	for name, p := range map[string]Policy{"default": base, "read-only": readOnly, "network-git": network} {
		t.Run(name, func(t *testing.T) {
			got, err := SeatbeltProfile(p)
			require.NoError(t, err)
			golden := filepath.Join("testdata", "seatbelt", name+".sb")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), got)
		})
	}
	_, err := SeatbeltProfile(Policy{Workspace: "rel", TempDir: "/tmp"})
	assert.Error(t, err, "relative paths are refused")
}
