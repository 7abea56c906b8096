package files

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/workspace"
)

// Tools returns the eight workspace tools bound to ws.
func Tools(ws *workspace.Workspace) []tools.Tool {
	return []tools.Tool{
		newListFiles(ws), newFindFiles(ws), newReadFile(ws), newRipgrep(ws),
		newPatch(ws), newMkdir(ws), newRm(ws), newRmdir(ws),
	}
}

// ListRoot is a short listing of the workspace root for the system prompt:
// at most max entries (directories end in /), ignore rules applied, hidden
// directories left out, sorted, with a count of the rest.
func ListRoot(ws *workspace.Workspace, max int) string {
	var names []string
	walkDir(context.Background(), ws.Sandbox, ws.Root, ".", walkOptions{HiddenFiles: true, MaxDepth: 1, Workers: 1},
		func(_ int, e walkEntry) bool {
			n := e.Rel
			if e.isDir() {
				n += "/"
			}
			names = append(names, n)
			return false
		})
	sort.Strings(names)
	if len(names) == 0 {
		return "(empty)"
	}
	if max > 0 && len(names) > max {
		rest := len(names) - max
		names = append(names[:max:max], fmt.Sprintf("… and %d more", rest))
	}
	return strings.Join(names, "\n")
}

// tag marks an undo entry as made by this call's conversation turn.
func tag(inv tools.Invocation, e workspace.UndoEntry) workspace.UndoEntry {
	e.Conv, e.Turn = inv.Conversation, inv.Turn
	return e
}
