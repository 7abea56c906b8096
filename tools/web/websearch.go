package web

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/fido-nvim/fido/tools"
	"github.com/fido-nvim/fido/tools/text"
)

//go:embed websearch.md
var websearchTemplate string

const (
	websearchDefaultResults = 5
	websearchMaxResults     = 20
	websearchMaxQuery       = 400
	websearchMaxContent     = 2000
	websearchMaxAnswer      = 4000
	websearchMaxInclude     = 300
	websearchMaxExclude     = 150
)

var (
	websearchTopics     = []string{"general", "news", "finance"}
	websearchTimeRanges = map[string]string{
		"day": "day", "week": "week", "month": "month", "year": "year",
		"d": "day", "w": "week", "m": "month", "y": "year",
	}
)

// websearchTool searches the web through Tavily's /search.
type websearchTool struct{ c *tavilyClient }

func newWebsearch(c *tavilyClient) tools.Tool {
	t := &websearchTool{c: c}
	return tools.Define(tools.Def[websearchParams]{
		Name: "websearch", Access: tools.ReadOnly, Contract: websearchContract,
		Run: t.run, Summarize: websearchParams.summary,
	})
}

type websearchParams struct {
	Query          string   `json:"query" jsonschema:"What to search for, as a natural-language question or keywords."`
	MaxResults     *int     `json:"max_results,omitempty" jsonschema:"Maximum number of results. Default {{.DefaultResults}}."`
	Topic          string   `json:"topic,omitempty" jsonschema:"Search category. Default general; news for current events."`
	TimeRange      string   `json:"time_range,omitempty" jsonschema:"Only results published within this period before now."`
	IncludeDomains []string `json:"include_domains,omitempty" jsonschema:"Only search these domains, e.g. [\"go.dev\", \"pkg.go.dev\"]."`
	ExcludeDomains []string `json:"exclude_domains,omitempty" jsonschema:"Leave out results from these domains."`
}

var websearchContract = tools.NewContract[websearchParams](websearchTemplate, tools.Vars{
	"DefaultResults": websearchDefaultResults, "MaxResults": websearchMaxResults, "MaxQuery": websearchMaxQuery,
	"MaxAnswer": websearchMaxAnswer, "MaxContent": websearchMaxContent,
}, tools.MinLength("query", 1), tools.MaxLength("query", websearchMaxQuery), tools.Minimum("max_results", 1), tools.Maximum("max_results", websearchMaxResults),
	tools.Enum("topic", websearchTopics...), tools.Enum("time_range", "day", "week", "month", "year"),
	tools.MaxItems("include_domains", websearchMaxInclude), tools.MaxItems("exclude_domains", websearchMaxExclude))

// tavilySearchRequest is the POST /search body. The key travels only in the
// Authorization header.
type tavilySearchRequest struct {
	Query          string   `json:"query"`
	SearchDepth    string   `json:"search_depth"`
	IncludeAnswer  string   `json:"include_answer"`
	MaxResults     int      `json:"max_results"`
	Topic          string   `json:"topic,omitempty"`
	TimeRange      string   `json:"time_range,omitempty"`
	IncludeDomains []string `json:"include_domains,omitempty"`
	ExcludeDomains []string `json:"exclude_domains,omitempty"`
}

type tavilySearchResponse struct {
	Answer  string `json:"answer"`
	Results []struct {
		Title   string    `json:"title"`
		URL     string    `json:"url"`
		Content string    `json:"content"`
		Score   flexFloat `json:"score"`
	} `json:"results"`
	ResponseTime flexFloat `json:"response_time"`
}

type websearchHit struct {
	Title   string  `json:"title"`
	URL     string  `json:"url"`
	Content string  `json:"content"`
	Score   float64 `json:"score"`
}

type websearchResult struct {
	Answer  string         `json:"answer,omitempty"`
	Results []websearchHit `json:"results"`
	Note    string         `json:"note"`
}

func (p websearchParams) summary() string {
	s := fmt.Sprintf("%q", text.Shorten(text.Collapse(p.Query), 80))
	var extra []string
	for _, e := range []string{p.Topic, p.TimeRange} {
		if e != "" && e != "general" {
			extra = append(extra, e)
		}
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

func (t *websearchTool) run(ctx context.Context, _ tools.Invocation, p websearchParams) (tools.Result, error) {
	if t.c.apiKey == "" {
		return tools.ErrorResult("needs TAVILY_API_KEY; set it and restart Fido"), nil
	}
	req, err := p.request()
	if err != nil {
		return tools.ErrorResult("%v", err), nil
	}
	var resp tavilySearchResponse
	if err := t.c.post(ctx, "/search", req, &resp); err != nil {
		var te *tavilyError
		if errors.As(err, &te) {
			return tools.ErrorResult("%s", te.msg), nil
		}
		return tools.Result{}, err
	}
	out := websearchResult{Results: []websearchHit{}, Note: webUntrustedNote}
	out.Answer, _ = webCut(strings.TrimSpace(resp.Answer), websearchMaxAnswer, "answer")
	for _, r := range resp.Results {
		content, _ := webCut(strings.TrimSpace(r.Content), websearchMaxContent, "snippet")
		out.Results = append(out.Results, websearchHit{
			Title:   strings.TrimSpace(r.Title),
			URL:     r.URL,
			Content: content,
			Score:   float64(r.Score),
		})
	}
	summary := text.Count(len(out.Results), "result", "results")
	if len(out.Results) == 0 {
		summary = "no results"
	}
	if out.Answer != "" {
		summary += " + answer"
	}
	return tools.JSONResult(out, summary), nil
}

// request validates the arguments and builds the Tavily body.
func (p websearchParams) request() (tavilySearchRequest, error) {
	q := strings.TrimSpace(p.Query)
	if q == "" {
		return tavilySearchRequest{}, errors.New("query is required")
	}
	if n := len([]rune(q)); n > websearchMaxQuery {
		return tavilySearchRequest{}, fmt.Errorf("query is %d characters; at most %d are allowed, so shorten it to the key terms", n, websearchMaxQuery)
	}
	req := tavilySearchRequest{Query: q, SearchDepth: "basic", IncludeAnswer: "basic", MaxResults: websearchDefaultResults}
	if p.MaxResults != nil {
		n := *p.MaxResults
		if n < 1 || n > websearchMaxResults {
			return req, fmt.Errorf("max_results must be between 1 and %d, got %d", websearchMaxResults, n)
		}
		req.MaxResults = n
	}
	if p.Topic != "" {
		topic := strings.ToLower(strings.TrimSpace(p.Topic))
		ok := false
		for _, t := range websearchTopics {
			ok = ok || t == topic
		}
		if !ok {
			return req, fmt.Errorf("topic must be one of %s, got %q", strings.Join(websearchTopics, ", "), p.Topic)
		}
		req.Topic = topic
	}
	if p.TimeRange != "" {
		tr, ok := websearchTimeRanges[strings.ToLower(strings.TrimSpace(p.TimeRange))]
		if !ok {
			return req, fmt.Errorf("time_range must be one of day, week, month, year, got %q", p.TimeRange)
		}
		req.TimeRange = tr
	}
	var err error
	if req.IncludeDomains, err = cleanDomains("include_domains", p.IncludeDomains, websearchMaxInclude); err != nil {
		return req, err
	}
	if req.ExcludeDomains, err = cleanDomains("exclude_domains", p.ExcludeDomains, websearchMaxExclude); err != nil {
		return req, err
	}
	return req, nil
}

// cleanDomains trims and checks a domain list; Tavily wants bare domains,
// so a scheme or trailing slash the model adds is dropped.
func cleanDomains(field string, in []string, max int) ([]string, error) {
	if len(in) > max {
		return nil, fmt.Errorf("%s has %d entries; at most %d are allowed", field, len(in), max)
	}
	var out []string
	for _, d := range in {
		d = strings.TrimSpace(d)
		d = strings.TrimPrefix(strings.TrimPrefix(d, "https://"), "http://")
		d = strings.TrimRight(d, "/")
		if d == "" {
			continue
		}
		if strings.ContainsAny(d, " \t\n") {
			return nil, fmt.Errorf("%s entry %q is not a domain", field, d)
		}
		out = append(out, d)
	}
	return out, nil
}
