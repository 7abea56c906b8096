package permission

import (
	"fmt"
	"path/filepath"
	"strings"
)

// The escape table is what stands between a rule and an escape: an allow
// rule X approves X's own words, and the arguments after them are read here
// for every option or operand of a common tool that runs a program or writes
// outside the workspace (or into .git). A finding asks the user even when an
// allow rule matches the command; words the rule itself names are approved.
// Tools not in the table are approved by their rule whatever their options.

// call is one simple command being read against the escape table.
type call struct {
	a    *analysis
	ws   []word
	name string
	// env are the variables assigned for this command (before it, or by env).
	env []string
	// dir is where the command works, relative to the line's directory
	// (git -C sub).
	dir string
	out []finding
}

// finding is one reason to ask, at the word that carries it, or a relative
// path the command writes (asked about if the line changes directory).
type finding struct {
	at       int
	reason   string
	opaque   bool
	relative string
	concern  Concern
}

// flag records an option or operand that runs a program (ConcernCode: a
// sandbox contains what it runs). One that writes outside the workspace,
// into .git, deletes files or reaches another machine uses flagAs.
func (c *call) flag(at int, format string, args ...any) {
	c.flagAs(ConcernCode, at, format, args...)
}

// flagAs records a finding about concern k.
func (c *call) flagAs(k Concern, at int, format string, args ...any) {
	c.out = append(c.out, finding{at: at, reason: fmt.Sprintf(format, args...), concern: k})
}

// flagOpaque: what the finding runs is not in the text (a script file).
func (c *call) flagOpaque(at int, format string, args ...any) {
	c.out = append(c.out, finding{at: at, reason: fmt.Sprintf(format, args...), opaque: true, concern: ConcernOpaque})
}

// write records that the command writes path (found at word at).
func (c *call) write(at int, path string, literal bool) {
	if literal && !devSink(path) {
		path = c.path(path)
	}
	if r, k := c.a.checkTarget(path, literal); r != "" {
		c.flagAs(k, at, "%s %s", c.name, r)
		return
	}
	if !filepath.IsAbs(path) && !devSink(path) {
		c.out = append(c.out, finding{at: at, relative: path})
	}
}

// path is p as the command sees it (relative to its directory).
func (c *call) path(p string) string {
	if filepath.IsAbs(p) || c.dir == "" {
		return p
	}
	return filepath.Join(c.dir, p)
}

// writeWord: the command writes the file word i names.
func (c *call) writeWord(i int) { c.write(i, c.ws[i].text, c.ws[i].literal) }

// writeOpt: the command writes the file an option's value names.
func (c *call) writeOpt(o option) { c.write(o.vat, o.value, o.lit) }

// writesHere: the command writes into its working directory.
func (c *call) writesHere(at int) { c.out = append(c.out, finding{at: at, relative: "."}) }

// check reads the command's arguments against the table.
func (c *call) check() {
	if f := escapes[c.name]; f != nil {
		f(c)
		return
	}
	for prefix, f := range escapesByPrefix {
		if strings.HasPrefix(c.name, prefix) {
			f(c)
			return
		}
	}
}

// optSpec describes a tool's options well enough to find its values and
// operands. A short or long option listed as taking a value must always
// take one (a wrong entry would hide the next word); options not listed
// are read as flags, so the next word is read on its own.
type optSpec struct {
	// short are the short options that take a value ("o" for -o FILE);
	// shortOpt those whose value is optional and only attached (-i[SUFFIX]).
	short, shortOpt string
	// long are the long options that take a value, longOpt those whose
	// value is optional and only given with "=", flags long options without
	// a value that are prefixes of others (--checkpoint, --checkpoint-action).
	long, longOpt, flags []string
	// abbrev: getopt_long's unique prefixes name long options.
	abbrev bool
	// stop: the first operand ends the options (no GNU permutation).
	stop bool
}

// option is one option as written: -o FILE, -oFILE, --output=FILE.
type option struct {
	at, vat int // the option's word and the word holding its value
	short   byte
	long    string
	value   string
	has     bool // a value was given
	lit     bool // the value is a plain literal
}

type parsedArgs struct {
	opts     []option
	operands []int
}

// parse reads ws[from:] with spec. A word computed at run time where an
// option could be is flagged (it may expand to --pre=sh), unless it is an
// option's value.
func (c *call) parse(spec optSpec, from int) parsedArgs {
	var p parsedArgs
	only := false
	for i := from; i < len(c.ws); i++ {
		w := c.ws[i]
		if !w.literal {
			if !only && c.a.mayBeOption(w) {
				c.flag(i, "an argument of %s is computed at run time and may be an option that runs or writes", c.name)
			}
			p.operands = append(p.operands, i)
			if spec.stop {
				only = true
			}
			continue
		}
		if only || w.text == "-" || !strings.HasPrefix(w.text, "-") {
			p.operands = append(p.operands, i)
			if spec.stop {
				only = true
			}
			continue
		}
		if w.text == "--" {
			only = true
			continue
		}
		if strings.HasPrefix(w.text, "--") {
			name, val, hasEq := strings.Cut(w.text[2:], "=")
			o := option{at: i, vat: i, long: name, value: val, has: hasEq, lit: true}
			if !hasEq && spec.takesValue(name) && i+1 < len(c.ws) {
				i++
				o.vat, o.value, o.has, o.lit = i, c.ws[i].text, true, c.ws[i].literal
			}
			p.opts = append(p.opts, o)
			continue
		}
		for j := 1; j < len(w.text); j++ {
			ch := w.text[j]
			o := option{at: i, vat: i, short: ch, lit: true}
			rest := w.text[j+1:]
			if strings.IndexByte(spec.short, ch) >= 0 {
				if rest != "" {
					o.value, o.has = rest, true
				} else if i+1 < len(c.ws) {
					i++
					o.vat, o.value, o.has, o.lit = i, c.ws[i].text, true, c.ws[i].literal
				}
				p.opts = append(p.opts, o)
				break
			}
			if strings.IndexByte(spec.shortOpt, ch) >= 0 {
				o.value, o.has = rest, rest != ""
				p.opts = append(p.opts, o)
				break
			}
			p.opts = append(p.opts, o)
		}
	}
	return p
}

// takesValue: the long option name (maybe abbreviated) takes a value.
func (s optSpec) takesValue(name string) bool {
	if contains(s.long, name) {
		return true
	}
	if !s.abbrev || contains(s.longOpt, name) || contains(s.flags, name) {
		return false
	}
	n := 0
	for _, l := range s.long {
		if strings.HasPrefix(l, name) {
			n++
		}
	}
	return n == 1 && name != ""
}

// is reports whether o is one of names: "-o" for a short option, "output"
// for a long one (a getopt_long abbreviation of it counts when the spec
// allows them, unless it is exactly another known option).
func (o option) is(spec optSpec, names ...string) bool {
	for _, n := range names {
		if o.short != 0 {
			if len(n) == 2 && n[0] == '-' && n[1] == o.short {
				return true
			}
			continue
		}
		if strings.HasPrefix(n, "-") {
			continue
		}
		if o.long == n {
			return true
		}
		if spec.abbrev && o.long != "" && strings.HasPrefix(n, o.long) &&
			!contains(spec.long, o.long) && !contains(spec.longOpt, o.long) && !contains(spec.flags, o.long) {
			return true
		}
	}
	return false
}

// name is the option as written, for messages.
func (o option) name() string {
	if o.short != 0 {
		return "-" + string(o.short)
	}
	return "--" + o.long
}

// has reports an option among names.
func (p parsedArgs) has(spec optSpec, names ...string) (option, bool) {
	for _, o := range p.opts {
		if o.is(spec, names...) {
			return o, true
		}
	}
	return option{}, false
}
