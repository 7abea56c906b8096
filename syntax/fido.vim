" Fido's transcript: Markdown (headings, code fences, emphasis), with Fido's
" own highlights (reasoning, tool lines, errors) on top as extmarks.
if exists("b:current_syntax")
  finish
endif
runtime! syntax/markdown.vim
unlet! b:current_syntax
" Underscores in identifiers are not emphasis in a coding transcript.
syntax clear markdownError
let b:current_syntax = "fido"
