package files

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/confined"
	"github.com/fido-nvim/fido/tools/workspace"
)

//go:embed read_file.md
var readFileTemplate string

const (
	readDefaultLimit = 500
	readMaxLimit     = 2000
	readMaxLineLen   = 4000
	readMaxBytes     = 256 << 10
	// sparseCheckSize: larger files are checked for holes before reading.
	sparseCheckSize = 1 << 20
)

// readFileTool is read_file: a text file by lines.
type readFileTool struct{ ws *workspace.Workspace }

func newReadFile(ws *workspace.Workspace) tools.Tool {
	t := &readFileTool{ws: ws}
	return tools.Define(tools.Def[readFileParams]{
		Name: "read_file", Access: tools.ReadOnly, Contract: readFileContract,
		Run: t.run, Summarize: readFileParams.summary,
	})
}

type readFileParams struct {
	Path  string `json:"path" jsonschema:"File relative to the workspace root."`
	Seek  int    `json:"seek,omitempty" jsonschema:"Zero-based index of the first line to return. Default 0."`
	Limit int    `json:"limit,omitempty" jsonschema:"Maximum number of lines to return. Default {{.DefaultLimit}}."`
}

var readFileContract = tools.NewContract[readFileParams](readFileTemplate, tools.Vars{
	"DefaultLimit": readDefaultLimit, "MaxLimit": readMaxLimit, "MaxLineLen": readMaxLineLen, "MaxBytes": readMaxBytes,
}, tools.Minimum("seek", 0), tools.Minimum("limit", 1), tools.Maximum("limit", readMaxLimit))

// Validate implements tools.Validator; a limit above the maximum is capped.
func (p *readFileParams) Validate() error {
	if p.Path == "" {
		return errors.New("path is required")
	}
	if p.Seek < 0 {
		return fmt.Errorf("seek must be 0 or more, got %d", p.Seek)
	}
	switch {
	case p.Limit < 0:
		return fmt.Errorf("limit must be positive, got %d", p.Limit)
	case p.Limit == 0:
		p.Limit = readDefaultLimit
	case p.Limit > readMaxLimit:
		p.Limit = readMaxLimit
	}
	return nil
}

func (p readFileParams) summary() string {
	s := p.Path
	switch {
	case p.Limit > 0:
		s += fmt.Sprintf(" %d–%d", p.Seek+1, p.Seek+p.Limit)
	case p.Seek > 0:
		s += fmt.Sprintf(" from %d", p.Seek+1)
	}
	return s
}

// readLines is the result of reading a window of a file's lines.
type readLines struct {
	text     string
	first    int // zero-based index of the first returned line
	returned int
	total    int
	crlf     bool
	cutLines int
	byteCap  bool // stopped early at readMaxBytes
}

func (t *readFileTool) run(ctx context.Context, inv tools.Invocation, p readFileParams) (tools.Result, error) {
	abs, err := t.ws.Sandbox.Resolve(p.Path)
	if err != nil {
		return tools.ErrorResult("%v", err), nil
	}
	rel := t.ws.Sandbox.Rel(abs)
	// Opened without blocking and typed by Fstat of the open descriptor: a
	// FIFO or device is refused before a byte is read.
	f, fi, err := t.ws.Sandbox.Open(abs)
	if err != nil {
		return tools.ErrorResult("%s", workspace.ErrorText(t.ws, abs, err)), nil
	}
	defer f.Close()
	if fi.IsDir() {
		return tools.ErrorResult("%s is a directory; use list_files to see its entries", rel), nil
	}
	if !fi.Mode().IsRegular() {
		return tools.ErrorResult("%s is not a regular file (it is %s)", rel, confined.TypeName(fi.Mode())), nil
	}
	// A sparse file's holes read as NUL bytes: gigabytes of them would be
	// read (and counted as one endless line) before the answer "binary".
	if fi.Size() > sparseCheckSize {
		if off, ok := firstHole(f, fi.Size()); ok {
			return tools.ErrorResult("%s is a binary file (a sparse file of %d bytes: from byte %d on, a hole reads as NUL bytes); read_file only reads text", rel, fi.Size(), off), nil
		}
	}
	// The whole file streams through readWindow: hash it on the way, so the
	// conversation knows which content the model saw (partial reads too).
	sum := sha256.New()
	rl, err := readWindow(ctx, io.TeeReader(confined.Reader(ctx, f), sum), p.Seek, p.Limit)
	if err != nil {
		if errors.Is(err, errBinary) {
			return tools.ErrorResult("%s is a binary file (it contains NUL bytes); read_file only reads text", rel), nil
		}
		if ctx.Err() != nil {
			return tools.Result{}, err
		}
		return tools.ErrorResult("%s", workspace.ErrorText(t.ws, abs, err)), nil
	}
	if rl.total == 0 {
		inv.Files.Saw(rel, hex.EncodeToString(sum.Sum(nil)))
		return tools.Result{Content: fmt.Sprintf("[%s: empty file, 0 lines]\n", rel), Summary: "empty file"}, nil
	}
	if p.Seek >= rl.total {
		return tools.ErrorResult("seek %d is past the end: %s has %d lines (valid seek: 0 to %d)", p.Seek, rel, rl.total, rl.total-1), nil
	}
	inv.Files.Saw(rel, hex.EncodeToString(sum.Sum(nil)))
	var b strings.Builder
	crlf := ""
	if rl.crlf {
		crlf = ", CRLF line endings"
	}
	fmt.Fprintf(&b, "[%s: lines %d-%d of %d%s]\n", rel, rl.first+1, rl.first+rl.returned, rl.total, crlf)
	b.WriteString(rl.text)
	next := rl.first + rl.returned
	if next < rl.total {
		why := ""
		if rl.byteCap {
			why = " (output capped at 256 KiB)"
		}
		fmt.Fprintf(&b, "[more: %d lines follow%s; call read_file with seek=%d]\n", rl.total-next, why, next)
	}
	if rl.cutLines > 0 {
		fmt.Fprintf(&b, "[%d lines longer than %d bytes were cut]\n", rl.cutLines, readMaxLineLen)
	}
	summary := fmt.Sprintf("%d lines", rl.returned)
	if rl.returned < rl.total {
		summary = fmt.Sprintf("%d of %d lines", rl.returned, rl.total)
	}
	return tools.Result{Content: b.String(), Summary: summary}, nil
}

var errBinary = errors.New("binary file")

// firstHole is confined.FirstHole; tests replace it to act as a file system
// that cannot report holes.
var firstHole = confined.FirstHole

// readWindow streams r once: it counts every line and keeps lines
// [seek, seek+limit) within the byte caps.
func readWindow(ctx context.Context, r io.Reader, seek, limit int) (readLines, error) {
	// The whole file is checked for NUL bytes, not only its start: the same
	// rule as ripgrep's and patch's, so every tool agrees on what is binary.
	br := bufio.NewReaderSize(r, 64<<10)
	rl := readLines{first: seek}
	var out bytes.Buffer
	var line []byte  // the current line's kept prefix
	lineLen := 0     // bytes of the current line, its ending included
	var tail [2]byte // the line's last two bytes, to find its ending
	inLine := false
	taking := func() bool { return rl.total >= seek && rl.returned < limit && !rl.byteCap }
	for {
		chunk, err := br.ReadSlice('\n')
		if bytes.IndexByte(chunk, 0) >= 0 {
			return readLines{}, errBinary
		}
		if len(chunk) > 0 {
			inLine = true
			if len(chunk) >= 2 {
				tail = [2]byte{chunk[len(chunk)-2], chunk[len(chunk)-1]}
			} else {
				tail = [2]byte{tail[1], chunk[0]}
			}
			if taking() && len(line) < readMaxLineLen+2 {
				line = append(line, chunk...)
			}
			lineLen += len(chunk)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && err != io.EOF {
			return rl, err
		}
		if inLine {
			if taking() {
				content := bytes.TrimSuffix(line, nl)
				if bytes.HasSuffix(content, []byte{'\r'}) {
					rl.crlf = true
					content = content[:len(content)-1]
				}
				if out.Len()+len(content) > readMaxBytes && rl.returned > 0 {
					rl.byteCap = true
				} else {
					if len(content) > readMaxLineLen {
						cut := readMaxLineLen
						for cut > 0 && content[cut]&0xC0 == 0x80 {
							cut--
						}
						// The size reported is the line's text, without its ending.
						n := lineLen
						if tail[1] == '\n' {
							n--
							if tail[0] == '\r' && lineLen >= 2 {
								n--
							}
						}
						content = append(content[:cut:cut], fmt.Sprintf(" … [line cut: %d bytes]", n)...)
						rl.cutLines++
					}
					out.Write(content)
					out.WriteByte('\n')
					rl.returned++
				}
			} else if rl.total == 0 && bytes.HasSuffix(chunk, []byte("\r\n")) {
				rl.crlf = true
			}
			rl.total++
			line, lineLen, inLine, tail = line[:0], 0, false, [2]byte{}
			if rl.total%65536 == 0 && ctx.Err() != nil {
				return rl, ctx.Err()
			}
		}
		if err == io.EOF {
			break
		}
	}
	rl.text = out.String()
	return rl, nil
}
