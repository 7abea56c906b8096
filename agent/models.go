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

// ContextLength asks the endpoint's model list (GET <base>/models, as
// OpenRouter and other OpenAI-compatible servers serve it) for the model's
// context window in tokens. It returns 0 and an error when the server has no
// such list or does not say.
func (o *OpenRouter) ContextLength(ctx context.Context, model string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.cfg.BaseURL+"/models", nil)
	if err != nil {
		return 0, err
	}
	if o.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	req.Header.Set("HTTP-Referer", o.cfg.Referer)
	req.Header.Set("X-Title", o.cfg.Title)
	resp, err := o.cfg.HTTPClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("model list: %s", o.scrubText(err.Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("model list: HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsBody))
	if err != nil {
		return 0, fmt.Errorf("model list: %v", err)
	}
	var n int64
	gjson.GetBytes(body, "data").ForEach(func(_, m gjson.Result) bool {
		if m.Get("id").String() != model {
			return true
		}
		n = m.Get("context_length").Int()
		if n == 0 {
			n = m.Get("top_provider.context_length").Int()
		}
		return false
	})
	if n <= 0 {
		return 0, fmt.Errorf("model list: no context length for %s", model)
	}
	return int(n), nil
}
