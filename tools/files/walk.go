package files

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/fido-nvim/fido/tools/confined"
	"github.com/fido-nvim/fido/tools/workspace"
)

// walkEntry is one directory entry the walker kept (not hidden, not ignored).
type walkEntry struct {
	Rel   string      // workspace-relative, slash-separated
	Abs   string      // absolute
	Type  fs.FileMode // type bits from the directory listing (no stat)
	Depth int         // 1 for children of the start directory

	dir  *os.File // the open directory holding the entry; valid during visit only
	name string   // the entry's name in dir
}

func (e walkEntry) isDir() bool  { return e.Type.IsDir() }
func (e walkEntry) isLink() bool { return e.Type&fs.ModeSymlink != 0 }

// open opens the entry for reading relative to its open directory, in one
// system call, never following a symlink and never blocking; the caller
// checks the returned type (the entry may have changed since the listing).
// Only valid inside visit.
func (e walkEntry) open() (*os.File, fs.FileInfo, error) {
	return confined.OpenChild(e.dir, e.name)
}

// readlink reads the entry's symlink target relative to its open directory.
// Only valid inside visit.
func (e walkEntry) readlink() (string, error) {
	return confined.ReadlinkChild(e.dir, e.name)
}

// walkOptions say which entries a walk keeps.
type walkOptions struct {
	// HiddenDirs descends into and reports directories whose name starts with a dot.
	HiddenDirs bool
	// HiddenFiles reports non-directories whose name starts with a dot.
	HiddenFiles bool
	// NoIgnore turns .gitignore handling off.
	NoIgnore bool
	// MaxDepth limits the depth of reported entries; 0 means unlimited.
	MaxDepth int
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
}

// workerCount is the number of goroutines a walk with these options uses.
func (o walkOptions) workerCount() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// walkStats reports what a walk could not read.
type walkStats struct {
	Unreadable int    // directories that could not be listed
	FirstError string // the first such error, for the model
}

// walkDir walks the workspace sb from the directory startAbs (workspace-relative
// startRel) in parallel. Every directory is opened through the workspace's
// os.Root (never outside it, never blocking on a FIFO swapped in). visit runs concurrently on Workers goroutines and is
// given the worker index, so callers can keep per-worker buffers; for a
// directory it returns whether to descend. The `.git` directory is never
// entered. Symlinks are reported but never followed. Ignored directories are
// pruned, so nothing below them can be re-included (git's rule).
func walkDir(ctx context.Context, sb *workspace.Sandbox, startAbs, startRel string, opt walkOptions, visit func(worker int, e walkEntry) bool) walkStats {
	workers := opt.workerCount()
	var ign *ignoreNode
	if !opt.NoIgnore {
		ign, _ = ignoreChainFor(sb, startRel)
	}
	type item struct {
		abs, rel string
		ign      *ignoreNode
		depth    int
	}
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		stack   = []item{{abs: startAbs, rel: startRel, ign: ign}}
		active  int
		stopped atomic.Bool
		stats   walkStats
		wg      sync.WaitGroup
	)
	if startRel == "." {
		stack[0].rel = ""
	}
	fail := func(err error) {
		mu.Lock()
		stats.Unreadable++
		if stats.FirstError == "" {
			stats.FirstError = err.Error()
		}
		mu.Unlock()
	}
	process := func(w int, it item, push func(item)) {
		f, err := sb.OpenDir(it.abs)
		if err != nil {
			fail(err)
			return
		}
		defer f.Close()
		ents, err := f.ReadDir(-1)
		if err != nil && len(ents) == 0 {
			fail(err)
			return
		}
		chain := it.ign
		// The start directory's own .gitignore is already in the chain.
		if !opt.NoIgnore && it.depth > 0 {
			for _, de := range ents {
				if de.Name() == ".gitignore" {
					if data, ok := readIgnoreChild(sb, f, it.rel, de.Type()); ok {
						chain = newIgnoreNode(chain, it.rel, data)
					}
					break
				}
			}
		}
		depth := it.depth + 1
		for _, de := range ents {
			if stopped.Load() {
				return
			}
			if ctx.Err() != nil {
				stopped.Store(true)
				return
			}
			name := de.Name()
			typ := de.Type()
			isDir := typ.IsDir()
			if name[0] == '.' {
				if isDir && (name == ".git" || !opt.HiddenDirs) {
					continue
				}
				if !isDir && !opt.HiddenFiles {
					continue
				}
			}
			rel := name
			if it.rel != "" {
				rel = it.rel + "/" + name
			}
			if chain != nil && chain.ignored(rel, isDir) {
				continue
			}
			e := walkEntry{Rel: rel, Abs: it.abs + string(filepath.Separator) + name, Type: typ, Depth: depth, dir: f, name: name}
			descend := visit(w, e)
			if isDir && descend && (opt.MaxDepth == 0 || depth < opt.MaxDepth) {
				push(item{abs: e.Abs, rel: rel, ign: chain, depth: depth})
			}
		}
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var local []item
			push := func(it item) { local = append(local, it) }
			for {
				mu.Lock()
				for len(stack) == 0 && active > 0 {
					cond.Wait()
				}
				if len(stack) == 0 {
					mu.Unlock()
					cond.Broadcast()
					return
				}
				it := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				active++
				mu.Unlock()

				if ctx.Err() != nil {
					stopped.Store(true)
				}
				if !stopped.Load() {
					process(w, it, push)
				}

				mu.Lock()
				if !stopped.Load() {
					stack = append(stack, local...)
				}
				local = local[:0]
				active--
				mu.Unlock()
				cond.Broadcast()
			}
		}(w)
	}
	wg.Wait()
	return stats
}
