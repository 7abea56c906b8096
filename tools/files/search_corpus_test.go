package files

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fido-nvim/fido/tools/toolstest"
	"github.com/fido-nvim/fido/tools/workspace"
)

// The corpus tests keep the ripgrep tool's results equal to a simple
// reference: Go's regexp run on every line separately (a line excludes its
// \n and keeps a \r, a leading UTF-8 BOM is not part of the first line),
// over every file of at most 2 MiB without a NUL byte.

// corpusPatterns cover the query classes of issue #9: literals, -i with
// ASCII and non-ASCII letters, classes and alternations before $, ^, \b,
// repetition counts, Unicode classes, many matches and none.
var corpusPatterns = []struct {
	pattern    string
	ignoreCase bool
}{
	{"err", false}, {"return nil", false}, {"zqxjvkwpq_never", false},
	{"ERR", true}, {`\bdeadline\b`, true}, {"é", true}, {"ö", true}, {"σ", true}, {"ΣΟΦΙΑ", true},
	{"straße", true}, {"Ж", true}, {"k", true},
	{`\d$`, false}, {`[0-9]$`, false}, {`(2|3)$`, false}, {`\d+$`, false}, {`;$`, false}, {`\)$`, false},
	{`\s$`, false}, {`[^a-z]$`, false}, {`$`, false}, {`^$`, false}, {`^`, false}, {`^\s+\S`, false},
	{`^func \w+\(`, false}, {`\bx\b`, false}, {`\Bor\B`, false}, {`.{200,}`, false}, {`^.{0,3}$`, false},
	{`a{3}`, false}, {`\p{Greek}`, false}, {`\p{Han}+`, false}, {`\p{Cyrillic}\s`, false}, {`[α-ω]{3,}`, true},
	{`(ReadFile|WriteFile|ReadDir)\(`, false}, {`[A-Z][a-z]+Marshal[A-Z]`, false}, {`x*`, false},
	{`\Aerr`, false}, {`;\z`, false}, {`(?m)^err$`, false}, {`\r$`, false}, {`\x{FFFD}`, false},
	{`.`, false}, {`[^\n]{5}$`, false}, {`(?s)a.b`, false}, {`(a|b|c)+d`, true},
}

var corpusWords = []string{
	"err", "return", "nil", "if", "func", "ReadFile(", "WriteFile(x)", "ReadDir(", "deadline", "DeadLine", "xdeadline",
	"JSONMarshalText", "json.Marshal", "Straße", "STRASSE", "café", "CAFÉ", "Köln", "KÖLN", "σοφία", "ΣΟΦΙΑ", "λόγος",
	"Москва", "ЖУК", "жук", "日本語", "中文字", "😀", "x", "y_1", "a", "aaa", "abd", "42", "7", "3", "2", ";", ")", "{", "}",
	"\t", "  ", "K", "k", "\u212a", "ſ", "\xff", "\xc3", "a\xffb", "(", "//", "Ǆ", "ǅ", "ǆ", "\u00a0", "xorz", "theMarshalX",
}

// corpusLine builds one random line (without its ending).
func corpusLine(rnd *rand.Rand) string {
	var b strings.Builder
	if rnd.Intn(8) == 0 {
		return ""
	}
	if rnd.Intn(5) == 0 {
		b.WriteString(strings.Repeat(" ", rnd.Intn(6)))
	}
	n := 1 + rnd.Intn(10)
	if rnd.Intn(40) == 0 {
		n = 60 + rnd.Intn(400) // a long line
	}
	for i := 0; i < n; i++ {
		if i > 0 && rnd.Intn(3) > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(corpusWords[rnd.Intn(len(corpusWords))])
	}
	return b.String()
}

// corpusFile builds a random file: LF, CRLF or mixed endings, sometimes no
// final newline.
func corpusFile(rnd *rand.Rand, lines int) []byte {
	var b bytes.Buffer
	style := rnd.Intn(3)
	for i := 0; i < lines; i++ {
		b.WriteString(corpusLine(rnd))
		crlf := style == 1 || (style == 2 && rnd.Intn(2) == 0)
		if i == lines-1 && rnd.Intn(3) == 0 {
			break // last line without newline
		}
		if crlf {
			b.WriteString("\r\n")
		} else {
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

// writeCorpus generates the tree and returns its files' contents by path.
// big adds the two files at the 2 MiB boundary.
func writeCorpus(t testing.TB, root string, seed int64, big bool) map[string][]byte {
	rnd := rand.New(rand.NewSource(seed))
	files := map[string][]byte{}
	for i := 0; i < 40; i++ {
		dir := []string{"a", "a/b", "c", "c/d/e", "."}[i%5]
		files[filepath.ToSlash(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)))] = corpusFile(rnd, 1+rnd.Intn(80))
	}
	files["empty.txt"] = nil
	files["nl.txt"] = []byte("\n")
	files["crlf-only.txt"] = []byte("\r\n\r\n")
	files["bom.txt"] = append([]byte("\xef\xbb\xbferr first\nerr\n"), corpusFile(rnd, 5)...)
	files["noeol.txt"] = []byte("x 7\nlast err 3")
	// A NUL far past the first 8 KiB: the whole file is binary.
	nul := corpusFile(rnd, 3000)
	require.Greater(t, len(nul), 77042)
	nul[77041] = 0
	files["late-nul.txt"] = nul
	if big {
		// Files at the 2 MiB boundary: exactly 2 MiB is searched, one byte more is not.
		line := "err 1; " + strings.Repeat("ω", 500) + "\n"
		exact := bytes.Repeat([]byte(line), DefaultMaxSearchFileSize/len(line)+1)[:DefaultMaxSearchFileSize]
		files["big/exact.txt"] = exact
		files["big/over.txt"] = append(bytes.Clone(exact), 'x')
	}
	long := corpusFile(rnd, 50)
	long = append(long, strings.Repeat("é", 20000)...)
	long = append(long, " err 5\n"...)
	files["long.txt"] = long
	for rel, data := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	return files
}

// referenceSearch is the simple reference: every line through Go's regexp.
func referenceSearch(t testing.TB, files map[string][]byte, pattern string, ignoreCase bool) []string {
	if ignoreCase {
		pattern = "(?i)" + pattern
	}
	re := regexp.MustCompile(pattern)
	out := []string{}
	for rel, data := range files {
		if len(data) > DefaultMaxSearchFileSize || bytes.IndexByte(data, 0) >= 0 {
			continue
		}
		data = bytes.TrimPrefix(data, utf8BOM)
		lines := strings.Split(string(data), "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1] // the text after a final \n is not a line
		}
		for i, l := range lines {
			if re.MatchString(l) {
				out = append(out, fmt.Sprintf("%s:%d", rel, i+1))
			}
		}
	}
	sort.Strings(out)
	return out
}

func matchKeys(res *SearchResult) []string {
	out := make([]string, 0, len(res.Matches))
	for _, m := range res.Matches {
		out = append(out, fmt.Sprintf("%s:%d", m.Path, m.Line))
	}
	sort.Strings(out)
	return out
}

func TestSearchCorpusAgreesWithReference(t *testing.T) {
	toolstest.Slow(t, "agreement with a reference over a generated corpus")
	root := t.TempDir()
	files := writeCorpus(t, root, 1, false)
	ws, err := workspace.New(root, nil, nil)
	require.NoError(t, err)
	for _, p := range corpusPatterns {
		t.Run(fmt.Sprintf("%s/i=%v", p.pattern, p.ignoreCase), func(t *testing.T) {
			want := referenceSearch(t, files, p.pattern, p.ignoreCase)
			start := time.Now()
			res, err := Search(t.Context(), ws, ".", SearchOptions{Pattern: p.pattern, IgnoreCase: p.ignoreCase, Workers: 3})
			require.NoError(t, err)
			assert.Less(t, time.Since(start), 5*time.Second)
			assert.Equal(t, want, matchKeys(res))
			assert.Equal(t, 1, res.SkippedBinary, "late-nul.txt")
		})
	}
}

// The size limit: a file of exactly 2 MiB is searched, one byte more is not.
func TestSearchCorpusSizeBoundary(t *testing.T) {
	root := t.TempDir()
	files := writeCorpus(t, root, 3, true)
	ws, err := workspace.New(root, nil, nil)
	require.NoError(t, err)
	for _, p := range []string{"err", `\d;\s\p{Greek}+$`} {
		res, err := Search(t.Context(), ws, ".", SearchOptions{Pattern: p})
		require.NoError(t, err)
		assert.Equal(t, referenceSearch(t, files, p, false), matchKeys(res))
		assert.Equal(t, 1, res.SkippedLarge, "big/over.txt")
		assert.Equal(t, 1, res.SkippedBinary, "late-nul.txt")
		assert.Contains(t, matchKeys(res), "big/exact.txt:1")
	}
}

// The engine's corner cases, each against the reference on one text.
func TestLineMatcherAgreesWithRegexp(t *testing.T) {
	texts := []string{
		"alpha beta\nGamma delta\n\nfoo(bar)\nReadFile(x)\nxReadDir(\nend",
		"x1\r\ny2;\r\nz)\n\r\n\n a b\n\t\tc\n2\n13",
		"Ωμέγα σοφία ΣΟΦΊΑ\nπαράδειγμα ς\nKELVIN \u212a k\nſ s S\n",
		"a\xffb\n\xff\n\xc3\n\xe2\x82\n",
		"",
		"\n",
		"no newline at all",
		"\xef\xbb\xbf^start\nBOM line 2\n",
		strings.Repeat("ab ba\n", 300) + "x abc\nbc\n" + strings.Repeat("ab\n", 100) + "ac",
		"x;\n;\n\n;y\n  ;\nk\u212a\nK\n",
	}
	patterns := []string{"a", "beta", `(?i)gamma`, `^$`, `\bdelta\b`, `(ReadFile|ReadDir)\(`, `[A-Z][a-z]+File`, `o\(`,
		`x*`, `end$`, `^`, `$`, `[^a]+`, `\d$`, `[0-9]$`, `(2|3)$`, `\d+$`, `;$`, `\)$`, `^\s+\S`, `\s$`, `(?i)σ`, `(?i)ΣΟΦΙΑ`,
		`(?i)k`, `(?i)s`, `\p{Greek}+`, `.{5,}`, `^.$`, `\x{FFFD}`, `a.b`, `^\^start`, `^BOM`, `\B`, `\b`, `(?i)[α-ω]$`, `^[^\r]*$`, `[ab]c$`, `\bac`, `;$`, `^;`, `\b;`, `(?i)k$`, `(?i)\x{212a}`, `ab|ba`}
	for _, p := range patterns {
		m, err := compileLineMatcher(p, false)
		require.NoError(t, err)
		sc := m.newScanner()
		re := regexp.MustCompile(p)
		for ti, text := range texts {
			var got []int
			data := []byte(text)
			sc.scan(data, func(ls, le int) {
				got = append(got, bytes.Count(data[:ls], []byte("\n"))+1)
				assert.NotContains(t, string(data[ls:le]), "\n")
			})
			var want []int
			lines := strings.Split(strings.TrimPrefix(text, "\xef\xbb\xbf"), "\n")
			if lines[len(lines)-1] == "" {
				lines = lines[:len(lines)-1]
			}
			for i, l := range lines {
				if re.MatchString(l) {
					want = append(want, i+1)
				}
			}
			assert.Equal(t, want, got, "pattern %q text %d", p, ti)
		}
	}
}

// One search run from many goroutines at once (and each with several
// workers) must give the same answer every time; -race checks the sharing.
func TestSearchConcurrentAgreement(t *testing.T) {
	toolstest.Slow(t, "agreement with a reference over a generated corpus")
	root := t.TempDir()
	files := writeCorpus(t, root, 2, false)
	ws, err := workspace.New(root, nil, nil)
	require.NoError(t, err)
	for _, p := range []string{`^\s+\S`, `(?i)é`, `\d$`} {
		want := referenceSearch(t, files, p, false)
		var wg sync.WaitGroup
		results := make([][]string, 8)
		for g := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := Search(t.Context(), ws, ".", SearchOptions{Pattern: p, Workers: 4})
				if assert.NoError(t, err) {
					results[g] = matchKeys(res)
				}
			}()
		}
		wg.Wait()
		for g, got := range results {
			assert.Equal(t, want, got, "pattern %q goroutine %d", p, g)
		}
	}
}

// Linear time: no pattern takes long on a 1 MB file.
func TestSearchOneMegabyteFileIsFast(t *testing.T) {
	toolstest.Slow(t, "times searches of a 1 MiB file")
	var b strings.Builder
	for b.Len() < 1<<20 {
		b.WriteString("\tif x := f(a, b); x != nil { return fmt.Errorf(\"σοφία %d\", 42) } // Ωμέγα;\n")
	}
	b.WriteString(strings.Repeat("a", 200000) + ")\n")
	ws, _ := toolstest.Workspace(t, map[string]string{"one.go": b.String()})
	for _, p := range []string{`\)$`, `;$`, `.{200,}`, `\p{Greek}`, `^\s+\S`, `(a|aa)*b`, `(x+x+)+y`, `[a-q][^u-z]{13}x`, `\w+\s+\w+\s+\w+$`} {
		for _, ic := range []bool{false, true} {
			// Every search builds its DFAs afresh, so each run is a cold
			// one; the best of three keeps a busy machine out of the figure.
			best := time.Hour
			runs := 3
			if raceEnabled {
				runs = 1
			}
			for range runs {
				start := time.Now()
				_, err := Search(t.Context(), ws, "one.go", SearchOptions{Pattern: p, IgnoreCase: ic})
				require.NoError(t, err)
				best = min(best, time.Since(start))
			}
			limit := 100 * time.Millisecond
			if raceEnabled {
				limit *= 10 // the race detector slows every memory access
			}
			assert.Less(t, best, limit, "pattern %q -i=%v", p, ic)
		}
	}
}

func TestSearchRefusesLiteralNewline(t *testing.T) {
	_, err := compileLineMatcher(`foo\nbar`, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line break")
}

// When rg is installed (CI installs it), the generated corpus must give
// rg's lines too, on patterns outside the documented differences (ASCII
// \d \w \s \b, invalid UTF-8 as U+FFFD).
func TestSearchCorpusAgreesWithRg(t *testing.T) {
	toolstest.Slow(t, "agreement with a reference over a generated corpus")
	rg, err := exec.LookPath("rg")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("rg is not installed (CI is set; scripts/ensure-tools installs ripgrep)")
		}
		t.Skip("rg is not installed")
	}
	root := t.TempDir()
	files := writeCorpus(t, root, 4, false)
	ws, err := workspace.New(root, nil, nil)
	require.NoError(t, err)
	for _, p := range []struct {
		pattern    string
		ignoreCase bool
	}{
		{"err", false}, {"ERR", true}, {"é", true}, {"ö", true}, {"σ", true}, {"ΣΟΦΙΑ", true}, {"k", true},
		{`[0-9]$`, false}, {`(2|3)$`, false}, {`[0-9]+$`, false}, {`;$`, false}, {`\)$`, false}, {`^$`, false},
		{`^[ \t]+[a-zA-Z(]`, false}, {`\p{Greek}`, false}, {`[α-ω]{3,}`, true}, {`(ReadFile|WriteFile|ReadDir)\(`, false},
		{`\r$`, false}, {`a{3}`, false}, {`^[a-z]{0,3}\r?$`, false},
	} {
		args := []string{"--no-config", "-n", "--null", "--max-filesize", "2M"}
		if p.ignoreCase {
			args = append(args, "-i")
		}
		cmd := exec.Command(rg, append(args, "-e", p.pattern)...)
		cmd.Dir = root
		out, err := cmd.Output()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
			require.NoError(t, err, p.pattern)
		}
		want := []string{}
		for _, l := range strings.Split(string(out), "\n") {
			path, rest, ok := strings.Cut(l, "\x00")
			if !ok || bytes.IndexByte(files[path], 0) >= 0 {
				continue // the rule: a file with a NUL anywhere is binary
			}
			num, _, _ := strings.Cut(rest, ":")
			want = append(want, path+":"+num)
		}
		sort.Strings(want)
		res, err := Search(t.Context(), ws, ".", SearchOptions{Pattern: p.pattern, IgnoreCase: p.ignoreCase})
		require.NoError(t, err)
		assert.Equal(t, want, matchKeys(res), "pattern %q -i=%v", p.pattern, p.ignoreCase)
	}
}
