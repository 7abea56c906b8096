package secret

import (
	"io"
	"sort"
	"strings"
	"sync"
)

// Env are the environment variables holding Fido's keys. The host
// reads them once and removes them from its environment; no child process
// (bash_exec, the JavaScript worker, ripgrep) ever gets them.
var Env = []string{"OPENROUTER_API_KEY", "TAVILY_API_KEY"}

// ScrubbedEnv is env without the variables named in Env.
func ScrubbedEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		secret := false
		for _, s := range Env {
			if k == s {
				secret = true
				break
			}
		}
		if !secret {
			out = append(out, kv)
		}
	}
	return out
}

// secretMinLen keeps a short, accidental "key" (say "x" in a test setup)
// from redacting every x in the transcript.
const secretMinLen = 8

// Redacted replaces a secret wherever it appears.
const Redacted = "[redacted]"

var secrets struct {
	sync.RWMutex
	list     []string
	replacer *strings.Replacer
}

// Add registers a key whose exact text must never leave the process:
// Redact replaces it in tool results, the transcript, the log and saved
// files. Short strings are ignored.
func Add(s string) {
	s = strings.TrimSpace(s)
	if len(s) < secretMinLen {
		return
	}
	secrets.Lock()
	defer secrets.Unlock()
	for _, have := range secrets.list {
		if have == s {
			return
		}
	}
	secrets.list = append(secrets.list, s)
	// Longest first, so a key containing another is replaced whole.
	sort.Slice(secrets.list, func(i, j int) bool { return len(secrets.list[i]) > len(secrets.list[j]) })
	pairs := make([]string, 0, 2*len(secrets.list))
	for _, k := range secrets.list {
		pairs = append(pairs, k, Redacted)
	}
	secrets.replacer = strings.NewReplacer(pairs...)
}

// Redact returns s with every registered secret replaced by [redacted].
func Redact(s string) string {
	secrets.RLock()
	r := secrets.replacer
	secrets.RUnlock()
	if r == nil {
		return s
	}
	return r.Replace(s)
}

// SafeCut returns the largest j ≤ i at which s can be cut in two without
// splitting a registered secret: one whole in s, or one s ends with the
// start of (the rest may follow). Redacting each part then hides the
// secret as redacting s whole would. 0 means no such cut after the start.
func SafeCut(s string, i int) int {
	secrets.RLock()
	list := secrets.list
	secrets.RUnlock()
	i = min(max(i, 0), len(s))
	for moved := true; moved && i > 0; {
		moved = false
		for _, k := range list {
			// A cut at i splits k when k (or, at the end of s, its start)
			// begins at some p with p < i < p+len(k).
			for p := max(0, i-len(k)+1); p < i; p++ {
				end := min(len(s), p+len(k))
				if s[p:end] == k[:end-p] {
					i, moved = p, true
					break
				}
			}
		}
	}
	return i
}

// RedactBytes is Redact for a byte slice; it returns b itself when nothing changed.
func RedactBytes(b []byte) []byte {
	secrets.RLock()
	r := secrets.replacer
	secrets.RUnlock()
	if r == nil {
		return b
	}
	s := string(b)
	if out := r.Replace(s); out != s {
		return []byte(out)
	}
	return b
}

// RedactWriter redacts what is written through it, line by line: a log
// line is written whole, so a key never straddles two writes.
func RedactWriter(w io.Writer) io.Writer { return redactWriter{w} }

type redactWriter struct{ w io.Writer }

func (r redactWriter) Write(p []byte) (int, error) {
	if _, err := r.w.Write(RedactBytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
