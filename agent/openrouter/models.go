package openrouter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/fido-nvim/fido/agent"
)

// maxModelsBody bounds the /models answer read (OpenRouter's is ~1 MB).
const maxModelsBody = 8 << 20

// listedModel is one entry of the model list: go-openai's model with the
// fields OpenRouter adds (other OpenAI-compatible servers may send none).
type listedModel struct {
	openai.Model
	ContextLength       float64       `json:"context_length"`
	TopProvider         *topProvider  `json:"top_provider"`
	Pricing             *modelPricing `json:"pricing"`
	SupportedParameters []string      `json:"supported_parameters"`
}

type topProvider struct {
	ContextLength float64 `json:"context_length"`
}

// modelPricing holds dollars per token, as OpenRouter sends them (strings).
type modelPricing struct {
	Prompt     *price `json:"prompt"`
	Completion *price `json:"completion"`
}

// price is a per-token price sent as a string ("0.000003") or a number.
type price float64

// UnmarshalJSON reads a price as a JSON string or number; text that is not
// a number counts as 0.
func (p *price) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		v = 0
	}
	*p = price(v)
	return nil
}

// info converts the entry to what the /model picker shows.
func (m listedModel) info() agent.ModelInfo {
	info := agent.ModelInfo{ID: m.ID, Context: int(m.ContextLength), PromptPrice: -1, CompletionPrice: -1}
	if info.Context == 0 && m.TopProvider != nil {
		info.Context = int(m.TopProvider.ContextLength)
	}
	if m.Pricing != nil && m.Pricing.Prompt != nil {
		info.PromptPrice = float64(*m.Pricing.Prompt) * 1e6
	}
	if m.Pricing != nil && m.Pricing.Completion != nil {
		info.CompletionPrice = float64(*m.Pricing.Completion) * 1e6
	}
	for _, p := range m.SupportedParameters {
		if p == "tools" {
			info.Tools = true
			break
		}
	}
	return info
}

// Models reads the endpoint's model list (GET <base>/models, as OpenRouter
// and other OpenAI-compatible servers serve it); it is Fido's
// agent.ModelLister. An entry that does not decode is left out rather than
// failing the list.
func (p *Provider) Models(ctx context.Context) ([]agent.ModelInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.cfg.BaseURL+"/models", nil)
	if err != nil {
		return nil, err
	}
	p.setHeaders(req.Header)
	resp, err := p.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("model list: %s", p.scrubText(err.Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// Read the (short) error page, so the connection stays open for
		// the first model call instead of being closed unread.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return nil, fmt.Errorf("model list: HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsBody))
	if err != nil {
		return nil, fmt.Errorf("model list: %v", err)
	}
	var list struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("model list: not a model list (%v)", err)
	}
	var out []agent.ModelInfo
	for _, raw := range list.Data {
		var m listedModel
		if json.Unmarshal(raw, &m) != nil || m.ID == "" {
			continue
		}
		out = append(out, m.info())
	}
	return out, nil
}

// ContextLength asks the endpoint's model list for the model's context
// window in tokens. It returns 0 and an error when the server has no such
// list or does not say.
func (p *Provider) ContextLength(ctx context.Context, model string) (int, error) {
	models, err := p.Models(ctx)
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
