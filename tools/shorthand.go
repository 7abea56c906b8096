package tools

import "github.com/fido-nvim/fido/tools/text"

// OneLine is text.Headline and ShortenTo is text.ShortenTo, left here only
// for tools/shell's bash_exec files, which another change rewrites at the
// same time; once both are merged they call tools/text and these go.
//
// Deprecated: use text.Headline.
func OneLine(s string, n int) string { return text.Headline(s, n) }

// ShortenTo is text.ShortenTo.
//
// Deprecated: use text.ShortenTo.
func ShortenTo(s string, n int) string { return text.ShortenTo(s, n) }
