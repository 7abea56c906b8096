package workspace

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// Fido's own tools (patch, mkdir, rm, rmdir, and reverting their changes)
// never change the files that make programs run later without a question
// to the user: git's own files, the MCP configuration Fido and other
// agents start servers from, agents' and editors' project settings, and
// the scripts a shell or Neovim runs on entering the directory. They
// refuse rather than ask: in edits = "auto" a patch has no question at all,
// and a question that comes only for these few files is one the user
// learns to wave through. The user, who has the editor open, makes such a
// change in a moment, seeing all of it; bash_exec stays available behind
// its approval.

// protectedDir is a folder whose every file is protected, wherever it is
// (matched per path element, in any case).
var protectedDir = map[string]string{
	".git":    "git's own files (config, hooks) can make git run commands",
	".fido":   "Fido's project commands and settings live there",
	".claude": "agents' project settings live there, and their hooks run commands",
	".vscode": "editor tasks and settings there can run programs when the folder is opened",
}

// protectedFile is a file name that is protected in every folder (any case).
var protectedFile = map[string]string{
	".mcp.json": "it names the MCP servers Fido and other agents start as programs",
	".envrc":    "direnv runs it when a shell enters the directory",
	".nvim.lua": "Neovim runs it on start when 'exrc' is set",
	".nvimrc":   "Neovim runs it on start when 'exrc' is set",
	".exrc":     "Neovim and Vim run it on start when 'exrc' is set",
}

// ProtectedError refuses a mutation whose path, as asked or as resolved
// through symlinks (abs), names a protected file or lies in a protected
// folder; the message tells the model why and what to do instead.
func (s *Sandbox) ProtectedError(asked, abs string) error {
	for _, p := range []string{filepath.ToSlash(asked), s.Rel(abs)} {
		if why, name := protectedReason(p); why != "" {
			if strings.EqualFold(strings.TrimSuffix(name, "/"), ".git") {
				return fmt.Errorf("%s is inside .git/; Fido never changes git's own files (its config and hooks can make git run commands); nothing was changed", asked)
			}
			return fmt.Errorf("%s is protected: %s, so Fido's tools never change %s; nothing was changed. Show the user the change you propose and let them make it", asked, why, name)
		}
	}
	return nil
}

// Protected reports whether rel (workspace-relative, slash-separated) is a
// protected file or lies in a protected folder.
func Protected(rel string) bool {
	why, _ := protectedReason(rel)
	return why != ""
}

// protectedReason returns why rel is protected and the element that makes
// it so ("" when it is not).
func protectedReason(rel string) (why, name string) {
	elems := strings.Split(path.Clean(rel), "/")
	for i, e := range elems {
		low := strings.ToLower(e)
		if why, ok := protectedDir[low]; ok {
			return why, e + "/"
		}
		if i == len(elems)-1 {
			if why, ok := protectedFile[low]; ok {
				return why, e
			}
		}
	}
	return "", ""
}
