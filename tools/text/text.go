package text

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Ellipsis marks where Shorten and ShortenTo cut.
const Ellipsis = "…"

// Shorten keeps at most n characters (runes) of s and marks a cut with an
// ellipsis after them; spaces just before the cut are dropped.
func Shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:max(n, 0)]), " \t") + Ellipsis
}

// ShortenTo cuts s so that it is at most n characters long, the ellipsis
// included (for a field of fixed width).
func ShortenTo(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return Shorten(s, n-1)
}

// Collapse makes s one line of plain text: every run of whitespace (line
// breaks included) becomes one space, the ends are trimmed, and control
// characters, format characters and invalid UTF-8 are dropped.
func Collapse(s string) string {
	var b strings.Builder
	space := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size <= 1:
		case unicode.IsSpace(r):
			space = b.Len() > 0
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
		default:
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// FirstLine is the first line of s, leading blank lines and the line's own
// surrounding spaces left out.
func FirstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(l)
}

// Headline shortens a possibly multi-line text (a command, a question) to
// its first line of at most n characters, saying how many lines it leaves
// out: "go test ./... … (+2 lines)".
func Headline(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	first := Shorten(strings.TrimSpace(lines[0]), n)
	if rest := len(lines) - 1; rest > 0 {
		return first + fmt.Sprintf(" … (+%d lines)", rest)
	}
	return first
}

// Duration words a duration for a sentence, as precisely as a reader
// needs: "0ms", "250ms", "1.5s", "12s", "2m5s", "1h2m3s". Negative
// durations count as zero.
func Duration(d time.Duration) string {
	d = max(d, 0)
	if ms := d.Round(time.Millisecond); ms < time.Second {
		return strconv.FormatInt(ms.Milliseconds(), 10) + "ms"
	}
	if tenths := d.Round(100 * time.Millisecond); tenths < time.Minute {
		return strings.TrimSuffix(strconv.FormatFloat(tenths.Seconds(), 'f', 1, 64), ".0") + "s"
	}
	return d.Round(time.Second).String()
}

// Clock words a running time for a display that ticks: always tenths of a
// second below a minute ("0.4s", "4.0s", "59.9s"), then "1m03s",
// "1h02m03s". It truncates rather than rounds, so the display never shows
// a time not yet reached ("60.0s" at 59.96 s). Negative durations count as
// zero.
func Clock(d time.Duration) string {
	d = max(d, 0)
	if d < time.Minute {
		tenths := int64(d / (100 * time.Millisecond))
		return fmt.Sprintf("%d.%ds", tenths/10, tenths%10)
	}
	secs := int64(d / time.Second)
	h, m, s := secs/3600, secs/60%60, secs%60
	if h > 0 {
		return fmt.Sprintf("%dh%02dm%02ds", h, m, s)
	}
	return fmt.Sprintf("%dm%02ds", m, s)
}

// ExactDuration words a limit in the largest unit that holds it exactly,
// for prose: "300 ms", "1 s", "2 min", "1 h".
func ExactDuration(d time.Duration) string {
	for _, u := range []struct {
		name string
		unit time.Duration
	}{{"h", time.Hour}, {"min", time.Minute}, {"s", time.Second}, {"ms", time.Millisecond}} {
		if d != 0 && d%u.unit == 0 {
			return strconv.FormatInt(int64(d/u.unit), 10) + " " + u.name
		}
	}
	return d.String()
}

// Size words a byte count in the largest binary unit that holds it
// exactly: "300 bytes", "16 KiB", "2 MiB", "1 GiB"; 1536 stays
// "1536 bytes". Meant for limits, which are round numbers.
func Size(n int64) string {
	for _, u := range []struct {
		name  string
		shift uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + " " + u.name
		}
	}
	if n == 1 {
		return "1 byte"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// Count is a number with its noun: "1 file", "3 files", "0 files".
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Plural(n, one, many)
}

// Plural is the noun alone, singular for exactly one: "retry", "retries".
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
