package toolstest

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools"
)

// Prompter is a tools.Prompter that records every prompt and answers from
// a script.
type Prompter struct {
	mu sync.Mutex
	// Selects and Inputs record the prompts shown, in order.
	Selects []Select
	Inputs  []string
	Choose  []int         // Select answers, in order
	Every   string        // when set, Select picks the item with this text, every time
	Typed   []Input       // Input answers, in order
	Err     error         // returned by every prompt when set
	Hold    bool          // Select waits for ctx to end
	Asked   chan struct{} // receives one value per prompt shown (if non-nil)
}

// Select is one Select prompt shown.
type Select struct {
	Prompt string
	Items  []string
}

// Input is one scripted answer to an Input prompt.
type Input struct {
	Text string
	OK   bool
}

// Select answers from Every or Choose, waits for ctx with Hold, and fails
// with Err.
func (f *Prompter) Select(ctx context.Context, prompt string, items []string) (int, error) {
	f.mu.Lock()
	f.Selects = append(f.Selects, Select{prompt, append([]string(nil), items...)})
	hold, err := f.Hold, f.Err
	var idx = -1
	if !hold && err == nil && f.Every != "" {
		for i, it := range items {
			if it == f.Every {
				idx = i
			}
		}
	} else if !hold && err == nil {
		if len(f.Choose) == 0 {
			err = errors.New("Prompter: unexpected Select")
		} else {
			idx, f.Choose = f.Choose[0], f.Choose[1:]
		}
	}
	f.mu.Unlock()
	if f.Asked != nil {
		f.Asked <- struct{}{}
	}
	if hold {
		<-ctx.Done()
		return -1, ctx.Err()
	}
	return idx, err
}

// Input answers from Typed (or fails with Err).
func (f *Prompter) Input(ctx context.Context, prompt, def string) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Inputs = append(f.Inputs, prompt)
	if f.Err != nil {
		return "", false, f.Err
	}
	if len(f.Typed) == 0 {
		return "", false, errors.New("Prompter: unexpected Input")
	}
	a := f.Typed[0]
	f.Typed = f.Typed[1:]
	return a.Text, a.OK, nil
}

// SelectCount is how many Select prompts were shown.
func (f *Prompter) SelectCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.Selects)
}

// Invoke runs one call of tool through a real registry; args is marshalled
// to JSON.
func Invoke(t testing.TB, ctx context.Context, tool tools.Tool, inv tools.Invocation, args any) tools.Result {
	t.Helper()
	reg, err := tools.NewRegistry(tool)
	require.NoError(t, err)
	b, err := json.Marshal(args)
	require.NoError(t, err)
	return reg.Invoke(ctx, inv, tool.Name(), b)
}

// Main is the invocation of a call made by the main agent.
var Main = tools.Invocation{Identity: tools.Identity{Role: tools.RoleMain}}
