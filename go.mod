module github.com/fido-nvim/fido

go 1.26.8

require (
	github.com/adrg/xdg v0.5.3
	github.com/bmatcuk/doublestar/v4 v4.10.4
	github.com/dlclark/regexp2/v2 v2.5.2
	github.com/dop251/goja v0.0.0-20260917113740-793a2a65c13b
	github.com/git-pkgs/gitignore v1.2.0
	github.com/google/jsonschema-go v0.4.3
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/neovim/go-client v1.2.2-0.20240514170004-863141a115a5
	github.com/sashabaranov/go-openai v1.43.0
	github.com/stretchr/testify v1.12.1
	github.com/tidwall/gjson v1.20.2
	golang.org/x/sys v0.47.0
	mvdan.cc/sh/v3 v3.14.1
)

require (
	github.com/go-sourcemap/sourcemap v2.1.4+incompatible // indirect
	github.com/google/pprof v0.0.0-20240727154555-813a5fbdbec8 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.3.0 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/text v0.16.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)
