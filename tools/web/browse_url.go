package web

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/text"
)

//go:embed browse_url.md
var browseURLTemplate string

const (
	browseMaxURLs      = 5
	browseMaxURLLen    = 2048
	browseMaxPageChars = 20000
	browseMaxQuery     = 400
	browseChunks       = 3
)

// browseURLTool extracts web pages as markdown through Tavily's /extract.
type browseURLTool struct{ c *tavilyClient }

func newBrowseURL(c *tavilyClient) tools.Tool {
	t := &browseURLTool{c: c}
	return tools.Define(tools.Def[browseURLParams]{
		Name: "browse_url", Access: tools.ReadOnly, Contract: browseURLContract,
		Run: t.run, Summarize: browseURLParams.summary,
	})
}

type browseURLParams struct {
	URLs  json.RawMessage `json:"urls" jsonschema:"The http(s) URLs of the pages to read, at most {{.MaxURLs}} (a single URL string is also accepted)."`
	Query string          `json:"query,omitempty" jsonschema:"Optional: what you are looking for; each page then returns only its {{.Chunks}} most relevant passages instead of the whole page."`
}

var browseURLContract = tools.NewContract[browseURLParams](browseURLTemplate, tools.Vars{
	"MaxURLs": browseMaxURLs, "MaxQuery": browseMaxQuery, "Chunks": browseChunks, "MaxPageChars": browseMaxPageChars,
}, tools.ArrayOf("urls", "string"), tools.MinItems("urls", 1), tools.MaxItems("urls", browseMaxURLs), tools.MaxLength("query", browseMaxQuery))

// tavilyExtractRequest is the POST /extract body. The key travels only in the
// Authorization header.
type tavilyExtractRequest struct {
	URLs            []string `json:"urls"`
	Format          string   `json:"format"`
	ExtractDepth    string   `json:"extract_depth"`
	Query           string   `json:"query,omitempty"`
	ChunksPerSource int      `json:"chunks_per_source,omitempty"`
}

type tavilyExtractResponse struct {
	Results []struct {
		URL        string `json:"url"`
		RawContent string `json:"raw_content"`
	} `json:"results"`
	FailedResults []struct {
		URL   string          `json:"url"`
		Error json.RawMessage `json:"error"`
	} `json:"failed_results"`
	ResponseTime flexFloat `json:"response_time"`
}

type browsePage struct {
	URL     string `json:"url"`
	Content string `json:"content"`
}

type browseFailure struct {
	URL   string `json:"url"`
	Error string `json:"error"`
}

type browseResult struct {
	Results []browsePage    `json:"results"`
	Failed  []browseFailure `json:"failed"`
	Note    string          `json:"note"`
}

func (p browseURLParams) summary() string {
	urls, _ := parseURLList(p.URLs)
	s := ""
	if len(urls) > 0 {
		s = text.Shorten(text.Collapse(urls[0]), 80)
	}
	if len(urls) > 1 {
		s += fmt.Sprintf(" +%d more", len(urls)-1)
	}
	if q := strings.TrimSpace(p.Query); q != "" {
		s += fmt.Sprintf(" %q", text.Shorten(text.Collapse(q), 60))
	}
	return strings.TrimSpace(s)
}

func (t *browseURLTool) run(ctx context.Context, _ tools.Invocation, p browseURLParams) (tools.Result, error) {
	if t.c.apiKey == "" {
		return tools.ErrorResult("needs TAVILY_API_KEY; set it and restart Fido"), nil
	}
	urls, err := parseURLList(p.URLs)
	if err != nil {
		return tools.ErrorResult("%v", err), nil
	}
	if urls, err = validateURLs(urls); err != nil {
		return tools.ErrorResult("%v", err), nil
	}
	req := tavilyExtractRequest{URLs: urls, Format: "markdown", ExtractDepth: "basic"}
	if q := strings.TrimSpace(p.Query); q != "" {
		if n := len([]rune(q)); n > browseMaxQuery {
			return tools.ErrorResult("query is %d characters; at most %d are allowed", n, browseMaxQuery), nil
		}
		req.Query, req.ChunksPerSource = q, browseChunks
	}
	var resp tavilyExtractResponse
	if err := t.c.post(ctx, "/extract", req, &resp); err != nil {
		var te *tavilyError
		if errors.As(err, &te) {
			return tools.ErrorResult("%s", te.msg), nil
		}
		return tools.Result{}, err
	}
	out := browseResult{Results: []browsePage{}, Failed: []browseFailure{}, Note: webUntrustedNote}
	for _, r := range resp.Results {
		content, _ := webCut(r.RawContent, browseMaxPageChars, "page")
		out.Results = append(out.Results, browsePage{URL: r.URL, Content: content})
	}
	for _, f := range resp.FailedResults {
		msg := tavilyDetailText(f.Error)
		if msg == "" {
			msg = "extraction failed"
		}
		out.Failed = append(out.Failed, browseFailure{URL: f.URL, Error: text.Shorten(text.Collapse(msg), 300)})
	}
	summary := text.Count(len(out.Results), "page", "pages")
	if len(out.Failed) > 0 {
		summary += fmt.Sprintf(" (%d failed)", len(out.Failed))
	}
	res := tools.JSONResult(out, summary)
	// Nothing usable came back: mark the call failed so the transcript shows it.
	res.IsError = res.IsError || len(out.Results) == 0
	return res, nil
}

// parseURLList accepts urls as one string or an array of strings.
func parseURLList(raw json.RawMessage) ([]string, error) {
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		return nil, errors.New("urls is required: one http(s) URL or an array of at most 5")
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		return many, nil
	}
	return nil, errors.New("urls must be a URL string or an array of URL strings")
}

// validateURLs checks every URL before any request: absolute http(s) with a
// host, no credentials, bounded length; duplicates are dropped.
func validateURLs(in []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, errors.New("urls contains an empty URL")
		}
		if len(s) > browseMaxURLLen {
			return nil, fmt.Errorf("URL %s is longer than %d characters", text.Shorten(text.Collapse(s), 80), browseMaxURLLen)
		}
		if strings.ContainsAny(s, " \t\r\n") {
			return nil, fmt.Errorf("URL %q contains whitespace; percent-encode it", text.Shorten(text.Collapse(s), 80))
		}
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("URL %q is not valid", text.Shorten(text.Collapse(s), 80))
		}
		if u.User != nil {
			u.User = nil
			return nil, fmt.Errorf("URL %s contains credentials (user:password@); remove them, browse_url only fetches public pages", u.String())
		}
		scheme := strings.ToLower(u.Scheme)
		if scheme != "http" && scheme != "https" {
			return nil, fmt.Errorf("URL %q must start with http:// or https://", text.Shorten(text.Collapse(s), 80))
		}
		if u.Hostname() == "" {
			return nil, fmt.Errorf("URL %q has no host", text.Shorten(text.Collapse(s), 80))
		}
		if seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, errors.New("urls is empty: give at least one http(s) URL")
	}
	if len(out) > browseMaxURLs {
		return nil, fmt.Errorf("urls has %d URLs; at most %d per call, split them over several calls", len(out), browseMaxURLs)
	}
	return out, nil
}
