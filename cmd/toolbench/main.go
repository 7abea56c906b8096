// Command toolbench compares the workspace tools' search and find engines
// with ripgrep (rg) and fd on a large generated tree, checks that they return
// the same results (rg's with the ripgrep tool's documented rules applied:
// ASCII \d \w \s \b, a file with a NUL anywhere is binary, a glob never
// re-includes ignored files), and prints a table of medians and ratios.
// It exits 1 when any result set differs.
//
//	go run ./cmd/toolbench [-dir /tmp/fido-bench] [-copies 3] [-runs 5]
//
// The tree (copies of Go's own source, an ignored node_modules, nested
// .gitignore files, a hidden directory, binary files and a text file over
// 2 MiB) is generated once under -dir and reused by later runs.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/git-pkgs/gitignore"

	"github.com/fido-nvim/fido/tools/files"
	"github.com/fido-nvim/fido/tools/workspace"
)

type query struct {
	name       string
	pattern    string // for our engine and the naive baseline
	ignoreCase bool
	rgArgs     []string // the same query for rg; our documented rules spelled out (ASCII \d \w \s \b)
	// path restriction and file glob. rg's -g overrides .gitignore, our
	// glob only filters the files searched anyway, so rg gets the glob as a
	// file type (-t/-T), which keeps its ignore rules.
	path, glob string
	naive      bool // also time the naive Go baseline
}

// ASCII spellings of Go's classes for rg, whose \d \w \s \b are Unicode.
const (
	rgS  = `[\t\n\f\r ]`
	rgNS = `[^\t\n\f\r ]`
	rgW  = `[0-9A-Za-z_]`
	rgB  = `(?-u:\b)`
)

// queries cover the classes of issue #9: literals, -i with ASCII and
// non-ASCII letters, classes and alternations before $, ^, \b, repetition
// counts, Unicode classes, globs, path restriction, many matches, no match.
var queries = []query{
	{name: "literal", pattern: "ErrUnexpectedEOF", rgArgs: []string{"ErrUnexpectedEOF"}, naive: true},
	{name: "-i word", pattern: `\bdeadline\b`, ignoreCase: true, rgArgs: []string{"-i", rgB + "deadline" + rgB}, naive: true},
	{name: "alternation", pattern: `(ReadFile|WriteFile|ReadDir)\(`, rgArgs: []string{`(ReadFile|WriteFile|ReadDir)\(`}, naive: true},
	{name: "inner literal", pattern: `[A-Z][a-z]+Marshal[A-Z]`, rgArgs: []string{`[A-Z][a-z]+Marshal[A-Z]`}, naive: true},
	{name: "many", pattern: `err`, rgArgs: []string{"err"}, naive: true},
	{name: "none", pattern: `zqxjvkwpq_never`, rgArgs: []string{"zqxjvkwpq_never"}, naive: true},
	{name: `\d$`, pattern: `\d$`, rgArgs: []string{`[0-9]$`}},
	{name: `[0-9]$`, pattern: `[0-9]$`, rgArgs: []string{`[0-9]$`}},
	{name: `(2|3)$`, pattern: `(2|3)$`, rgArgs: []string{`(2|3)$`}},
	{name: `\d+$`, pattern: `\d+$`, rgArgs: []string{`[0-9]+$`}},
	{name: `\)$`, pattern: `\)$`, rgArgs: []string{`\)$`}},
	{name: `;$`, pattern: `;$`, rgArgs: []string{`;$`}},
	{name: `\{$`, pattern: `\{$`, rgArgs: []string{`\{$`}},
	{name: `^\s+\S`, pattern: `^\s+\S`, rgArgs: []string{"^" + rgS + "+" + rgNS}},
	{name: `^$`, pattern: `^$`, rgArgs: []string{`^$`}},
	{name: `^\}$`, pattern: `^\}$`, rgArgs: []string{`^\}$`}},
	{name: `^package main$`, pattern: `^package main$`, rgArgs: []string{`^package main$`}},
	{name: `^func \w+\(`, pattern: `^func \w+\(`, rgArgs: []string{"^func " + rgW + `+\(`}},
	{name: `\berr\b`, pattern: `\berr\b`, rgArgs: []string{rgB + "err" + rgB}},
	{name: `.{200,}`, pattern: `.{200,}`, rgArgs: []string{`.{200,}`}},
	{name: `[a-z]{20}`, pattern: `[a-z]{20}`, rgArgs: []string{`[a-z]{20}`}},
	{name: `\w{30,}`, pattern: `\w{30,}`, rgArgs: []string{rgW + `{30,}`}},
	{name: `a{3,}`, pattern: `a{3,}`, rgArgs: []string{`a{3,}`}},
	{name: `0x[0-9a-fA-F]{8,}`, pattern: `0x[0-9a-fA-F]{8,}`, rgArgs: []string{`0x[0-9a-fA-F]{8,}`}},
	{name: `\p{Greek}`, pattern: `\p{Greek}`, rgArgs: []string{`\p{Greek}`}},
	{name: `\p{Han}`, pattern: `\p{Han}`, rgArgs: []string{`\p{Han}`}},
	{name: `\p{Cyrillic}+`, pattern: `\p{Cyrillic}+`, rgArgs: []string{`\p{Cyrillic}+`}},
	{name: `-i é`, pattern: "é", ignoreCase: true, rgArgs: []string{"-i", "é"}},
	{name: `-i ö`, pattern: "ö", ignoreCase: true, rgArgs: []string{"-i", "ö"}},
	{name: `-i σ`, pattern: "σ", ignoreCase: true, rgArgs: []string{"-i", "σ"}},
	{name: `-i ERR`, pattern: "ERR", ignoreCase: true, rgArgs: []string{"-i", "ERR"}},
	{name: `-i errorf`, pattern: "errorf", ignoreCase: true, rgArgs: []string{"-i", "errorf"}},
	{name: `-i http\.(get|post)`, pattern: `http\.(get|post)`, ignoreCase: true, rgArgs: []string{"-i", `http\.(get|post)`}},
	{name: `TODO|FIXME|XXX`, pattern: `TODO|FIXME|XXX`, rgArgs: []string{`TODO|FIXME|XXX`}},
	{name: `\.(Lock|Unlock)\(\)`, pattern: `\.(Lock|Unlock)\(\)`, rgArgs: []string{`\.(Lock|Unlock)\(\)`}},
	{name: `return [a-z]+, nil$`, pattern: `return [a-z]+, nil$`, rgArgs: []string{`return [a-z]+, nil$`}},
	{name: `//go:build`, pattern: `//go:build`, rgArgs: []string{`//go:build`}},
	{name: `[ \t]+$`, pattern: `[ \t]+$`, rgArgs: []string{`[ \t]+$`}},
	{name: `glob *.go`, pattern: `context\.Context`, glob: "*.go", rgArgs: []string{"--type-add", "q:*.go", "-t", "q", `context\.Context`}},
	{name: `glob !*_test.go`, pattern: `^func Test`, glob: "!*_test.go", rgArgs: []string{"--type-add", "q:*_test.go", "-T", "q", `^func Test`}},
	{name: `path go0/net/http`, pattern: `Header`, path: "go0/net/http", rgArgs: []string{"Header", "go0/net/http"}},
	{name: `path+glob`, pattern: `MOVQ`, path: "go0/runtime", glob: "*.s", rgArgs: []string{"--type-add", "q:*.s", "-t", "q", "MOVQ", "go0/runtime"}},
}

var globs = []string{"*.go", "*_test.go", "go.mod", "zz_none_*"}

func main() {
	dir := flag.String("dir", filepath.Join(os.TempDir(), "fido-bench"), "cache directory for the generated tree")
	copies := flag.Int("copies", 3, "copies of GOROOT/src in the tree")
	runs := flag.Int("runs", 5, "timed runs per tool and query (after one warm-up)")
	naive := flag.Bool("naive", true, "also time the naive Go baseline (one run per query)")
	goroot := flag.String("goroot", "", "Go installation whose src is copied (default: go env GOROOT)")
	flag.Parse()

	rgBin, err := exec.LookPath("rg")
	if err != nil {
		fatal("rg not found: apt-get install -y ripgrep")
	}
	fdBin := ""
	for _, n := range []string{"fdfind", "fd"} {
		if p, err := exec.LookPath(n); err == nil {
			fdBin = p
			break
		}
	}
	if fdBin == "" {
		fatal("fd not found: apt-get install -y fd-find")
	}
	if *goroot == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			fmt.Fprintln(os.Stderr, "toolbench: go env GOROOT:", err)
			os.Exit(1)
		}
		*goroot = strings.TrimSpace(string(out))
	}
	root, err := ensureTree(*dir, *goroot, *copies)
	if err != nil {
		fatal(err.Error())
	}
	ws, err := workspace.New(root, nil, nil)
	if err != nil {
		fatal(err.Error())
	}
	ctx := context.Background()
	fmt.Printf("tree: %s (%d copies of %s/src), GOMAXPROCS=%d, %d runs, medians in ms\n\n", root, *copies, *goroot, runtime.GOMAXPROCS(0), *runs)

	fmt.Println("| query | rg | ripgrep tool | ratio | naive Go | naive ratio | matching lines | same set |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	var ratios []float64
	allSame := true
	for _, q := range queries {
		rgArgs := append([]string{"--no-config", "-n", "--null", "--max-filesize", "2M"}, q.rgArgs...)
		var rgOut []byte
		runRg := func() {
			rgOut = runCmd(root, rgBin, rgArgs...)
		}
		var ours *files.SearchResult
		path := q.path
		if path == "" {
			path = "."
		}
		runOurs := func() {
			res, err := files.Search(ctx, ws, path, files.SearchOptions{Pattern: q.pattern, IgnoreCase: q.ignoreCase, Glob: q.glob})
			if err != nil {
				fatal(err.Error())
			}
			ours = res
		}
		rgMs, ourMs := timePair(*runs, runRg, runOurs)
		rgSet := applyRules(root, parseRg(rgOut))
		ourSet := make(map[string]bool, len(ours.Matches))
		for _, m := range ours.Matches {
			ourSet[fmt.Sprintf("%s:%d", m.Path, m.Line)] = true
		}
		same := equalSets(rgSet, ourSet)
		naiveCol, naiveRatio := "-", "-"
		if *naive && q.naive {
			var naiveSet map[string]bool
			ms := timeOnce(func() { naiveSet = naiveSearch(root, q.pattern, q.ignoreCase) })
			naiveCol, naiveRatio = fmt.Sprintf("%.0f", ms), fmt.Sprintf("%.2fx", ms/rgMs)
			if !equalSets(rgSet, naiveSet) {
				naiveRatio += " (set differs)"
			}
		}
		sameText := "yes"
		if !same {
			if n := invalidUTF8Only(root, rgSet, ourSet); n > 0 {
				sameText = fmt.Sprintf("yes, but for %d lines with invalid UTF-8 (documented: matched as U+FFFD)", n)
			} else {
				allSame = false
				sameText = "NO: " + diffSets(rgSet, ourSet)
			}
		}
		ratio := ourMs / rgMs
		ratios = append(ratios, ratio)
		fmt.Printf("| `%s` | %.0f | %.0f | %.2fx | %s | %s | %d | %s |\n", q.name, rgMs, ourMs, ratio, naiveCol, naiveRatio, len(rgSet), sameText)
	}
	fmt.Printf("\nsearch: median ratio %.2fx, worst %.2fx over %d queries (goal: median <= 1.2x, every query <= 5x)\n\n", median(ratios), maxOf(ratios), len(ratios))

	fmt.Println("| glob | fd | find_files | ratio | naive Go | naive ratio | entries | same set |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	var fratios []float64
	for _, g := range globs {
		var fdOut []byte
		runFd := func() { fdOut = runCmd(root, fdBin, "-s", "-g", g) }
		var ours *files.FindResult
		runOurs := func() {
			res, err := files.Find(ctx, ws, ".", g, 0)
			if err != nil {
				fatal(err.Error())
			}
			ours = res
		}
		fdMs, ourMs := timePair(*runs, runFd, runOurs)
		fdSet := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(string(fdOut)), "\n") {
			if l != "" {
				fdSet[strings.TrimSuffix(strings.TrimPrefix(l, "./"), "/")] = true
			}
		}
		ourSet := map[string]bool{}
		for _, p := range ours.Paths {
			ourSet[strings.TrimSuffix(p, "/")] = true
		}
		naiveCol, naiveRatio := "-", "-"
		if *naive {
			var naiveSet map[string]bool
			ms := timeOnce(func() { naiveSet = naiveFind(root, g) })
			naiveCol, naiveRatio = fmt.Sprintf("%.0f", ms), fmt.Sprintf("%.2fx", ms/fdMs)
			if !equalSets(fdSet, naiveSet) {
				naiveRatio += " (set differs)"
			}
		}
		sameText := "yes"
		if !equalSets(fdSet, ourSet) {
			allSame = false
			sameText = "NO: " + diffSets(fdSet, ourSet)
		}
		ratio := ourMs / fdMs
		fratios = append(fratios, ratio)
		fmt.Printf("| `%s` | %.0f | %.0f | %.2fx | %s | %s | %d | %s |\n", g, fdMs, ourMs, ratio, naiveCol, naiveRatio, len(fdSet), sameText)
	}
	fmt.Printf("\nfind: median ratio %.2fx, worst %.2fx (goal: <= 1.5x)\n", median(fratios), maxOf(fratios))
	if !allSame {
		fmt.Println("\nRESULT SETS DIFFER")
		os.Exit(1)
	}
}

func fatal(msg string) {
	fmt.Fprintln(os.Stderr, "toolbench:", msg)
	os.Exit(2)
}

// runCmd runs a command in dir with stdout to a pipe (grep-like tools may
// short-circuit when writing to /dev/null) and returns what it printed.
func runCmd(dir, bin string, args ...string) []byte {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		// rg and fd exit 1 when nothing matched.
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			fatal(fmt.Sprintf("%s %v: %v", bin, args, err))
		}
	}
	return out.Bytes()
}

// timePair warms both up once, then alternates them runs times and returns
// their median wall times in ms. Alternating keeps drift out of the ratio.
func timePair(runs int, a, b func()) (float64, float64) {
	a()
	b()
	var ta, tb []float64
	for i := 0; i < runs; i++ {
		ta = append(ta, timeOnce(a))
		tb = append(tb, timeOnce(b))
	}
	return median(ta), median(tb)
}

func timeOnce(f func()) float64 {
	start := time.Now()
	f()
	return float64(time.Since(start).Microseconds()) / 1000
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// parseRg reads `path\0line:text` lines into a set of "path:line".
func parseRg(out []byte) map[string]bool {
	set := map[string]bool{}
	for _, l := range bytes.Split(out, []byte("\n")) {
		i := bytes.IndexByte(l, 0)
		if i < 0 {
			continue
		}
		j := bytes.IndexByte(l[i+1:], ':')
		if j < 0 {
			continue
		}
		set[string(l[:i])+":"+string(l[i+1:i+1+j])] = true
	}
	return set
}

// applyRules applies the ripgrep tool's documented rules to rg's result:
// a file with a NUL byte anywhere is binary and skipped as a whole (rg
// stops at the first NUL, after printing the matches before it).
func applyRules(root string, set map[string]bool) map[string]bool {
	binary := map[string]bool{}
	checked := map[string]bool{}
	for k := range set {
		p := k[:strings.LastIndexByte(k, ':')]
		if !checked[p] {
			checked[p] = true
			data, err := os.ReadFile(filepath.Join(root, p))
			binary[p] = err == nil && bytes.IndexByte(data, 0) >= 0
		}
	}
	out := make(map[string]bool, len(set))
	for k := range set {
		if !binary[k[:strings.LastIndexByte(k, ':')]] {
			out[k] = true
		}
	}
	return out
}

// invalidUTF8Only returns how many lines the sets differ on when every one
// of them holds invalid UTF-8 (a documented difference: the tool matches
// such bytes as U+FFFD, rg's Unicode classes never match them), else 0.
func invalidUTF8Only(root string, a, b map[string]bool) int {
	var diff []string
	for k := range a {
		if !b[k] {
			diff = append(diff, k)
		}
	}
	for k := range b {
		if !a[k] {
			diff = append(diff, k)
		}
	}
	lines := map[string][][]byte{}
	for _, k := range diff {
		i := strings.LastIndexByte(k, ':')
		path := k[:i]
		var n int
		if _, err := fmt.Sscan(k[i+1:], &n); err != nil {
			return 0
		}
		if lines[path] == nil {
			data, err := os.ReadFile(filepath.Join(root, path))
			if err != nil {
				return 0
			}
			lines[path] = bytes.Split(data, []byte("\n"))
		}
		if n < 1 || n > len(lines[path]) || utf8.Valid(lines[path][n-1]) {
			return 0
		}
	}
	return len(diff)
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// diffSets describes how b differs from the reference a.
func diffSets(a, b map[string]bool) string {
	var missing, extra []string
	for k := range a {
		if !b[k] {
			missing = append(missing, k)
		}
	}
	for k := range b {
		if !a[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return fmt.Sprintf("%d missing %v, %d extra %v", len(missing), head(missing), len(extra), head(extra))
}

func head(s []string) []string {
	if len(s) > 3 {
		return s[:3]
	}
	return s
}

// naiveWalk is the straightforward baseline: serial filepath.WalkDir, a
// gitignore matcher that grows as directories are entered, hidden entries skipped.
func naiveWalk(root string, visit func(rel, abs string, d fs.DirEntry)) {
	m := gitignore.New("")
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == root {
			if path == root {
				m.AddFromFile(filepath.Join(root, ".gitignore"), "")
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if m.MatchPath(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			m.AddFromFile(filepath.Join(path, ".gitignore"), rel)
		}
		visit(rel, path, d)
		return nil
	})
}

// naiveSearch reads every file and runs the regexp on each line.
func naiveSearch(root, pattern string, ignoreCase bool) map[string]bool {
	if ignoreCase {
		pattern = "(?i)" + pattern
	}
	re := regexp.MustCompile(pattern)
	set := map[string]bool{}
	naiveWalk(root, func(rel, abs string, d fs.DirEntry) {
		if !d.Type().IsRegular() {
			return
		}
		data, err := os.ReadFile(abs)
		if err != nil || len(data) > 2<<20 || bytes.IndexByte(data, 0) >= 0 {
			return
		}
		lines := bytes.Split(data, []byte("\n"))
		if len(lines[len(lines)-1]) == 0 {
			lines = lines[:len(lines)-1]
		}
		for i, line := range lines {
			if re.Match(line) {
				set[fmt.Sprintf("%s:%d", rel, i+1)] = true
			}
		}
	})
	return set
}

func naiveFind(root, glob string) map[string]bool {
	set := map[string]bool{}
	naiveWalk(root, func(rel, abs string, d fs.DirEntry) {
		if ok, _ := doublestar.Match(glob, d.Name()); ok {
			set[rel] = true
		}
	})
	return set
}

// ensureTree builds the benchmark tree under dir unless a complete one with
// the same parameters is already there.
func ensureTree(dir, goroot string, copies int) (string, error) {
	root := filepath.Join(dir, fmt.Sprintf("tree-%d", copies))
	stamp := filepath.Join(dir, fmt.Sprintf("tree-%d.done", copies))
	if _, err := os.Stat(stamp); err == nil {
		return root, nil
	}
	src := filepath.Join(goroot, "src")
	if _, err := os.Stat(src); err != nil {
		return "", fmt.Errorf("need Go's source at %s: %w", src, err)
	}
	fmt.Fprintf(os.Stderr, "generating %s (once)…\n", root)
	_ = os.RemoveAll(root)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	sh := func(args ...string) error {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = root
		cmd.Stderr = os.Stderr
		return cmd.Run()
	}
	for i := 0; i < copies; i++ {
		if err := sh("cp", "-r", src, fmt.Sprintf("go%d", i)); err != nil {
			return "", err
		}
	}
	// Ignored trees and a hidden directory with searchable content.
	for _, d := range []string{"node_modules/a", "node_modules/b", ".cache"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(d)), 0o755); err != nil {
			return "", err
		}
		if err := sh("cp", "-r", filepath.Join(src, "net"), d); err != nil {
			return "", err
		}
	}
	files := map[string]string{
		".gitignore": "node_modules/\n*.log\n/build/\n# comment\n",
		// Negation, dir-only, anchored and a trailing /** with a re-include.
		"go0/.gitignore":                "*.s\n!asm_amd64.s\ntestdata/\n",
		"go1/.gitignore":                "/runtime/**\n!/runtime/*.go\n",
		"go1/cmd/.gitignore":            "/compile/\n*_test.go\n!main_test.go\n",
		"go0/net/http/.gitignore":       "[a-c]*.go\n!client.go\n",
		"build/out.go":                  "package build // ErrUnexpectedEOF err\n",
		"keep.log":                      "ErrUnexpectedEOF err deadline\n",
		"go0/crypto/tls/.gitignore":     "*\n!*/\n!*.go\n",
		"go0/crypto/tls/bench_extra.go": "package tls // ErrUnexpectedEOF deadline\n",
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	// A 3 MB binary and a small binary holding a matching word.
	rnd := rand.New(rand.NewSource(1))
	blob := make([]byte, 3<<20)
	rnd.Read(blob)
	copy(blob[1000:], "ErrUnexpectedEOF")
	if err := os.WriteFile(filepath.Join(root, "blob.bin"), blob, 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(root, "small.bin"), []byte("ErrUnexpectedEOF\x00err\n"), 0o644); err != nil {
		return "", err
	}
	// A 2.3 MB text file (over the 2 MiB limit) full of matches.
	var big bytes.Buffer
	for big.Len() < 2300<<10 {
		big.WriteString("if err != nil { return ErrUnexpectedEOF } // deadline ReadFile(x)\n")
	}
	if err := os.WriteFile(filepath.Join(root, "big.txt"), big.Bytes(), 0o644); err != nil {
		return "", err
	}
	if err := sh("git", "init", "-q"); err != nil {
		return "", err
	}
	return root, os.WriteFile(stamp, []byte(time.Now().String()), 0o644)
}
