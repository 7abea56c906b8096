package js

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/dop251/goja"
)

// jsFetchResponse is what the request goroutine hands back to the loop.
type jsFetchResponse struct {
	status     int
	statusText string
	url        string
	headers    map[string]string
	body       string
}

// fetchFunc is the global fetch: a minimal WHATWG-like fetch when the user
// approved network access, otherwise a function that throws saying why.
func (r *jsRun) fetchFunc() func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		if !r.network {
			r.throw("fetch is not available: network access is off for this run (%s). Pass allow_network: true and have the user approve it to use fetch", r.offlineWhy)
		}
		return r.fetch(call)
	}
}

func (r *jsRun) fetch(call goja.FunctionCall) goja.Value {
	vm := r.vm
	raw := r.str(call.Argument(0))
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		panic(vm.NewTypeError(fmt.Sprintf("fetch(%q): only absolute http:// and https:// URLs are supported", raw)))
	}
	method, body := "GET", ""
	header := http.Header{}
	if opts, ok := call.Argument(1).(*goja.Object); ok {
		if m := opts.Get("method"); m != nil && !goja.IsUndefined(m) {
			method = strings.ToUpper(r.str(m))
		}
		if h, ok := opts.Get("headers").(*goja.Object); ok {
			for _, k := range h.Keys() {
				header.Set(k, r.str(h.Get(k)))
			}
		}
		if b := opts.Get("body"); b != nil && !goja.IsUndefined(b) && !goja.IsNull(b) {
			if _, isStr := b.Export().(string); !isStr {
				panic(vm.NewTypeError("fetch: body must be a string (use JSON.stringify for objects)"))
			}
			body = b.String()
			if len(body) > jsMaxFetchSend {
				panic(vm.NewTypeError(fmt.Sprintf("fetch: body is %d bytes; at most %d bytes can be sent", len(body), jsMaxFetchSend)))
			}
		}
	}
	if r.fetches >= jsMaxFetches {
		r.throw("fetch: at most %d requests per run", jsMaxFetches)
	}
	r.fetches++
	req, err := http.NewRequestWithContext(r.ctx, method, u.String(), strings.NewReader(body))
	if err != nil {
		panic(vm.NewTypeError(fmt.Sprintf("fetch: %v", err)))
	}
	req.Header = header
	if body == "" {
		req.Body, req.ContentLength = http.NoBody, 0
	}

	p, resolve, reject := vm.NewPromise()
	r.pending++
	go func() {
		resp, err := r.do(req)
		r.post(func() error {
			r.pending--
			if err != nil {
				return reject(vm.NewTypeError(fmt.Sprintf("fetch %s failed: %v", u.Redacted(), err)))
			}
			return resolve(r.responseObject(resp))
		})
	}()
	return vm.ToValue(p)
}

// do performs the request within the run's deadline and reads the capped body.
func (r *jsRun) do(req *http.Request) (*jsFetchResponse, error) {
	resp, err := r.tool.client.Do(req)
	if err != nil {
		if r.ctx.Err() != nil {
			return nil, errors.New("the run's time limit ended the request")
		}
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, jsMaxFetchBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading the response: %w", err)
	}
	if len(data) > jsMaxFetchBody {
		return nil, fmt.Errorf("the response body is larger than %d MiB", jsMaxFetchBody>>20)
	}
	out := &jsFetchResponse{
		status:     resp.StatusCode,
		statusText: strings.TrimSpace(strings.TrimPrefix(resp.Status, fmt.Sprint(resp.StatusCode))),
		url:        resp.Request.URL.String(),
		headers:    map[string]string{},
		body:       string(data),
	}
	for k, v := range resp.Header {
		out.headers[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	return out, nil
}

// responseObject builds {status, statusText, ok, url, headers, text(), json()}.
func (r *jsRun) responseObject(resp *jsFetchResponse) *goja.Object {
	vm := r.vm
	obj := vm.NewObject()
	_ = obj.Set("status", resp.status)
	_ = obj.Set("statusText", resp.statusText)
	_ = obj.Set("ok", resp.status >= 200 && resp.status < 300)
	_ = obj.Set("url", resp.url)
	headers := vm.NewObject()
	keys := make([]string, 0, len(resp.headers))
	for k := range resp.headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		_ = headers.Set(k, resp.headers[k])
	}
	_ = obj.Set("headers", headers)
	_ = obj.Set("text", func(goja.FunctionCall) goja.Value {
		p, resolve, _ := vm.NewPromise()
		if err := resolve(resp.body); err != nil {
			panic(err)
		}
		return vm.ToValue(p)
	})
	_ = obj.Set("json", func(goja.FunctionCall) goja.Value {
		p, resolve, reject := vm.NewPromise()
		v, err := r.jsonPar(goja.Undefined(), vm.ToValue(resp.body))
		if err != nil {
			jsRethrowUncatchable(err)
			var ex *goja.Exception
			if errors.As(err, &ex) {
				err = reject(ex.Value())
			} else {
				err = reject(vm.NewGoError(err))
			}
		} else {
			err = resolve(v)
		}
		if err != nil {
			panic(err)
		}
		return vm.ToValue(p)
	})
	return obj
}
