package text

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestShorten(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven char", 10, "eleven cha…"},
		{"cut at a space here", 9, "cut at a…"},
		{"ünïcödé text", 5, "ünïcö…"},
		{"anything", 0, "…"},
		{"anything", -3, "…"},
		{"", 0, ""},
	} {
		assert.Equal(t, tc.want, Shorten(tc.s, tc.n), "Shorten(%q, %d)", tc.s, tc.n)
	}
}

func TestShortenTo(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven char", 10, "eleven ch…"},
		{"ab cd", 4, "ab…"},
		{"ünïcödé", 4, "ünï…"},
	} {
		got := ShortenTo(tc.s, tc.n)
		assert.Equal(t, tc.want, got, "ShortenTo(%q, %d)", tc.s, tc.n)
		assert.LessOrEqual(t, len([]rune(got)), tc.n, "the ellipsis is inside the width")
	}
}

func TestCollapse(t *testing.T) {
	for _, tc := range []struct{ s, want string }{
		{"plain", "plain"},
		{"  two\n\nlines\t and  tabs  ", "two lines and tabs"},
		{"\r\nCRLF\r\nend\r\n", "CRLF end"},
		{"bell\a and \x1b[31mescape", "bell and [31mescape"},
		{"zero\u200bwidth \u202eoverride", "zerowidth override"},
		{"bad \xff utf8", "bad utf8"},
		{"   ", ""},
		{"", ""},
	} {
		assert.Equal(t, tc.want, Collapse(tc.s), "Collapse(%q)", tc.s)
	}
}

func TestFirstLine(t *testing.T) {
	for _, tc := range []struct{ s, want string }{
		{"one", "one"},
		{"first\nsecond", "first"},
		{"\n\n  indented first  \nsecond", "indented first"},
		{"crlf\r\nnext", "crlf"},
		{"", ""},
	} {
		assert.Equal(t, tc.want, FirstLine(tc.s), "FirstLine(%q)", tc.s)
	}
}

func TestHeadline(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"go test ./...", 80, "go test ./..."},
		{"go test ./...\ngo vet ./...\n", 80, "go test ./... … (+1 lines)"},
		{"\n  cd x\n make\n make install", 80, "cd x … (+2 lines)"},
		{"a very long first line\nsecond", 6, "a very… … (+1 lines)"},
	} {
		assert.Equal(t, tc.want, Headline(tc.s, tc.n), "Headline(%q, %d)", tc.s, tc.n)
	}
}

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0ms"},
		{-time.Second, "0ms"},
		{229 * time.Microsecond, "0ms"},
		{500 * time.Microsecond, "1ms"},
		{12 * time.Millisecond, "12ms"},
		{999*time.Millisecond + 400*time.Microsecond, "999ms"},
		{999*time.Millisecond + 600*time.Microsecond, "1s"},
		{1500 * time.Millisecond, "1.5s"},
		{5 * time.Second, "5s"},
		{12340 * time.Millisecond, "12.3s"},
		{59960 * time.Millisecond, "1m0s"},
		{time.Minute, "1m0s"},
		{125 * time.Second, "2m5s"},
		{10 * time.Minute, "10m0s"},
		{time.Hour + 2*time.Minute + 3*time.Second, "1h2m3s"},
	} {
		assert.Equal(t, tc.want, Duration(tc.d), "Duration(%v)", tc.d)
	}
}

func TestClock(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0.0s"},
		{0, "0.0s"},
		{420 * time.Millisecond, "0.4s"},
		{4 * time.Second, "4.0s"},
		{4249 * time.Millisecond, "4.2s"},
		{59960 * time.Millisecond, "59.9s"},
		{time.Minute, "1m00s"},
		{63 * time.Second, "1m03s"},
		{63*time.Second + 900*time.Millisecond, "1m03s"},
		{59*time.Minute + 59*time.Second, "59m59s"},
		{time.Hour + 2*time.Minute + 3*time.Second, "1h02m03s"},
	} {
		assert.Equal(t, tc.want, Clock(tc.d), "Clock(%v)", tc.d)
	}
}

func TestExactDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{300 * time.Millisecond, "300 ms"},
		{time.Second, "1 s"},
		{90 * time.Second, "90 s"},
		{2 * time.Minute, "2 min"},
		{time.Hour, "1 h"},
		{1500 * time.Microsecond, "1.5ms"},
		{0, "0s"},
	} {
		assert.Equal(t, tc.want, ExactDuration(tc.d), "ExactDuration(%v)", tc.d)
	}
}

func TestSize(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 bytes"},
		{1, "1 byte"},
		{300, "300 bytes"},
		{1536, "1536 bytes"},
		{16 << 10, "16 KiB"},
		{256 << 10, "256 KiB"},
		{2 << 20, "2 MiB"},
		{1 << 30, "1 GiB"},
		{3 << 29, "1536 MiB"},
	} {
		assert.Equal(t, tc.want, Size(tc.n), "Size(%d)", tc.n)
	}
}

func TestCountAndPlural(t *testing.T) {
	for _, tc := range []struct {
		n           int
		count, noun string
	}{
		{0, "0 matches", "matches"},
		{1, "1 match", "match"},
		{2, "2 matches", "matches"},
		{-1, "-1 matches", "matches"},
	} {
		assert.Equal(t, tc.count, Count(tc.n, "match", "matches"))
		assert.Equal(t, tc.noun, Plural(tc.n, "match", "matches"))
	}
}
