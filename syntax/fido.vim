" Fido's transcript: a light Markdown subset (inline code, bold, fenced code)
" under Fido's own highlights (headers, reasoning, tool lines, errors are
" extmarks). Deliberately small: the full Markdown syntax made each redraw of
" a fast-scrolling transcript cost up to ~16 ms.
if exists("b:current_syntax")
  finish
endif
syntax match fidoInlineCode /`[^`]\+`/ contains=@NoSpell
syntax match fidoBold /\*\*[^*]\+\*\*/
syntax region fidoCodeBlock start=/^\s*```/ end=/^\s*```\s*$/ keepend contains=@NoSpell
syntax sync minlines=40 maxlines=80
highlight default link fidoInlineCode Constant
highlight default link fidoCodeBlock Constant
highlight default fidoBold term=bold cterm=bold gui=bold
let b:current_syntax = "fido"
