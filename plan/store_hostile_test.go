package plan

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools/toolstest"
)

// A plan.json that is a FIFO, a symlink to /dev/zero or a huge file must not
// hang or exhaust session start: the store starts empty, says so once, and
// keeps the thing aside.
func TestOpenStoreRefusesFIFODevZeroAndHugeFiles(t *testing.T) {
	for name, plant := range map[string]func(p string) error{
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"/dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"huge": func(p string) error {
			if err := os.WriteFile(p, []byte(`{"version":1,`), 0o644); err != nil {
				return err
			}
			return os.Truncate(p, 8<<30)
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "plan.json")
			if err := plant(p); err != nil {
				t.Skipf("%s: %v", name, err)
			}
			type opened struct {
				s      *Store
				notice string
				err    error
			}
			var o opened
			done := make(chan struct{})
			go func() {
				defer close(done)
				o.s, o.notice, o.err = OpenStore(p)
			}()
			toolstest.WaitBounded(t, 5*time.Second, "OpenStore", done)
			require.NoError(t, o.err)
			assert.Nil(t, o.s.Current())
			assert.Contains(t, o.notice, "could not be loaded")
			ents, err := os.ReadDir(filepath.Dir(p))
			require.NoError(t, err)
			kept := false
			for _, e := range ents {
				kept = kept || strings.HasPrefix(e.Name(), "plan.json.corrupt-")
			}
			assert.True(t, kept, "kept aside, never deleted")
		})
	}
}
