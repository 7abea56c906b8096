package main

import (
	"context"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// e2eMCPServerEnv makes this test binary serve as a stdio MCP server (one
// tool, "ping"), so the end-to-end tests have a real server of their own.
const e2eMCPServerEnv = "FIDO_E2E_MCP_SERVER"

type pingIn struct {
	Text string `json:"text"`
}

// serveE2EMCP runs the server on stdin/stdout until the client goes.
func serveE2EMCP() int {
	srv := sdk.NewServer(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "ping", Description: "Answers pong."},
		func(context.Context, *sdk.CallToolRequest, pingIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil, nil
		})
	_ = srv.Run(context.Background(), &sdk.StdioTransport{})
	return 0
}

func init() {
	if os.Getenv(e2eMCPServerEnv) == "1" {
		os.Exit(serveE2EMCP())
	}
}
