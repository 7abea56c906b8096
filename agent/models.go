package agent

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/tidwall/gjson"
)

// maxModelsBody bounds the /models answer read (OpenRouter's is ~1 MB).
const maxModelsBody = 8 << 20

// ModelInfo is one entry of the endpoint's model list.
type ModelInfo struct {
	ID      string
	Context int // tokens; 0 when the list does not say
	// PromptPrice and CompletionPrice are dollars per million tokens (-1:
	// not listed).
	PromptPrice, CompletionPrice float64
	// Tools says whether the model supports tool calls (false when the list
	// does not say).
	Tools bool
}

// Models reads the endpoint's model list (GET <base>/models, as OpenRouter
// and other OpenAI-compatible servers serve it).
func (o *OpenRouter) Models(ctx context.Context) ([]ModelInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.cfg.BaseURL+"/models", nil)
	if err != nil {
		return nil, err
	}
	if o.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	req.Header.Set("HTTP-Referer", o.cfg.Referer)
	req.Header.Set("X-Title", o.cfg.Title)
	resp, err := o.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("model list: %s", o.scrubText(err.Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("model list: HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsBody))
	if err != nil {
		return nil, fmt.Errorf("model list: %v", err)
	}
	var out []ModelInfo
	gjson.GetBytes(body, "data").ForEach(func(_, m gjson.Result) bool {
		info := ModelInfo{ID: m.Get("id").String(), Context: int(m.Get("context_length").Int()), PromptPrice: -1, CompletionPrice: -1}
		if info.ID == "" {
			return true
		}
		if info.Context == 0 {
			info.Context = int(m.Get("top_provider.context_length").Int())
		}
		if p := m.Get("pricing.prompt"); p.Exists() {
			info.PromptPrice = p.Float() * 1e6
		}
		if p := m.Get("pricing.completion"); p.Exists() {
			info.CompletionPrice = p.Float() * 1e6
		}
		m.Get("supported_parameters").ForEach(func(_, v gjson.Result) bool {
			if v.String() == "tools" {
				info.Tools = true
			}
			return !info.Tools
		})
		out = append(out, info)
		return true
	})
	return out, nil
}

// ContextLength asks the endpoint's model list for the model's context
// window in tokens. It returns 0 and an error when the server has no such
// list or does not say.
func (o *OpenRouter) ContextLength(ctx context.Context, model string) (int, error) {
	models, err := o.Models(ctx)
	if err != nil {
		return 0, err
	}
	for _, m := range models {
		if m.ID == model && m.Context > 0 {
			return m.Context, nil
		}
	}
	return 0, fmt.Errorf("model list: no context length for %s", model)
}
