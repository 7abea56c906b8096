package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type greetParams struct {
	Name  string `json:"name" jsonschema:"Who to greet."`
	Times int    `json:"times,omitempty" jsonschema:"How often."`
}

func (p *greetParams) Validate() error {
	if p.Name = strings.TrimSpace(p.Name); p.Name == "" {
		return errors.New("name is required")
	}
	if p.Times == 0 {
		p.Times = 1
	}
	return nil
}

var greetContract = NewContract[greetParams]("Greets someone.", nil, Minimum("times", 1))

// greet is a declared tool whose run returns what the test tells it to.
func greet(access Access, reply func(p greetParams) (Result, error)) *Declared[greetParams] {
	return Define(Def[greetParams]{
		Name: "greet", Access: access, Contract: greetContract,
		Run:       func(_ context.Context, _ Invocation, p greetParams) (Result, error) { return reply(p) },
		Summarize: func(p greetParams) string { return "greet " + p.Name },
	})
}

var mainCaller = Invocation{Identity: Identity{Role: RoleMain}}

func TestDefineAdvertisesTheContract(t *testing.T) {
	tool := greet(ReadOnly, nil)
	assert.Equal(t, "greet", tool.Name())
	assert.Equal(t, ReadOnly, tool.Access())
	assert.Equal(t, "Greets someone.", tool.Description())
	assert.JSONEq(t, string(greetContract.Parameters()), string(tool.Parameters()))
	assert.Same(t, greetContract, tool.Contract())
	require.NoError(t, CheckContract(tool))
	_, err := NewRegistry(tool)
	require.NoError(t, err)
}

// The tool writes only its sentence; the model reads it after the tool's name.
func TestDefineNamesTheToolInEveryError(t *testing.T) {
	for _, tc := range []struct {
		name        string
		args        string
		reply       Result
		wantContent string
		wantSummary string
	}{
		{"error result", `{"name":"bob"}`, ErrorResult("%s is not here", "bob"),
			`{"error":"greet: bob is not here"}`, "greet: bob is not here"},
		{"coded error result", `{"name":"bob"}`, CodedErrorResult("busy", "try later"),
			`{"error":{"code":"busy","message":"greet: try later"}}`, "busy: greet: try later"},
		{"named already", `{"name":"bob"}`, ErrorResult("greet: once"), `{"error":"greet: once"}`, "greet: once"},
		{"named as the subject", `{"name":"bob"}`, ErrorResult("greet needs a name"), `{"error":"greet needs a name"}`, "greet needs a name"},
		{"a longer name is not the name", `{"name":"bob"}`, ErrorResult("greeting failed"), `{"error":"greet: greeting failed"}`, "greet: greeting failed"},
		{"a summary the tool set stays", `{"name":"bob"}`, func() Result { r := ErrorResult("no"); r.Summary = "short"; return r }(),
			`{"error":"greet: no"}`, "short"},
		{"a result built by hand is the tool's own", `{"name":"bob"}`, Result{Content: "exit 1", IsError: true, Summary: "failed"},
			"exit 1", "failed"},
		{"success is untouched", `{"name":"bob"}`, Result{Content: "hi bob", Summary: "ok"}, "hi bob", "ok"},
		{"arguments that do not decode", `{"name":3}`, Result{},
			`{"error":"greet: argument \"name\" must be a string, got number"}`, `greet: argument "name" must be a string, got number`},
		{"unknown argument", `{"name":"bob","loud":true}`, Result{},
			`{"error":"greet: unknown argument \"loud\""}`, `greet: unknown argument "loud"`},
		{"Validate", `{"name":"  "}`, Result{}, `{"error":"greet: name is required"}`, "greet: name is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := greet(ReadOnly, func(greetParams) (Result, error) { return tc.reply, nil })
			res, err := tool.Run(context.Background(), mainCaller, json.RawMessage(tc.args))
			require.NoError(t, err)
			assert.Equal(t, tc.wantContent, res.Content)
			assert.Equal(t, tc.wantSummary, res.Summary)
		})
	}
}

func TestDefineRunsWithValidatedArguments(t *testing.T) {
	var got greetParams
	tool := greet(ReadOnly, func(p greetParams) (Result, error) { got = p; return Result{Content: "ok"}, nil })
	res, err := tool.Run(context.Background(), mainCaller, json.RawMessage(`{"name":"  ann "}`))
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, greetParams{Name: "ann", Times: 1}, got, "Validate normalized the arguments")
	res.Changed = []string{"x"}
	assert.Equal(t, []string{"x"}, res.named("greet").Changed)
}

func TestDefineArgumentOptions(t *testing.T) {
	tool := Define(Def[greetParams]{Name: "greet", Access: ReadOnly, Contract: greetContract, ArgsCode: "invalid_arguments", ArgsNote: "; nothing was sent",
		Run: func(context.Context, Invocation, greetParams) (Result, error) { return Result{}, nil }})
	res, err := tool.Run(context.Background(), mainCaller, json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"error":{"code":"invalid_arguments","message":"greet: name is required; nothing was sent"}}`, res.Content)
}

// A real fault is the registry's to report, with the tool's name.
func TestDefinePassesFaultsToTheRegistry(t *testing.T) {
	tool := greet(ReadOnly, func(greetParams) (Result, error) { return Result{}, errors.New("disk on fire") })
	reg, err := NewRegistry(tool)
	require.NoError(t, err)
	res := reg.Invoke(context.Background(), mainCaller, "greet", json.RawMessage(`{"name":"a"}`))
	assert.Equal(t, `{"error":"greet failed: disk on fire"}`, res.Content)
}

// Through the registry the guard answers first: a subagent never runs a
// mutating tool, plan mode neither, and a Delegation tool's RefuseNested
// answers a subagent.
func TestDefinedToolsAreGuarded(t *testing.T) {
	ran := false
	mutating := greet(Mutating, func(greetParams) (Result, error) { ran = true; return Result{}, nil })
	delegation := Define(Def[greetParams]{Name: "nest", Access: Delegation, Contract: greetContract,
		Run:          func(context.Context, Invocation, greetParams) (Result, error) { ran = true; return Result{}, nil },
		RefuseNested: func(Invocation) Result { return Result{Content: "nested", IsError: true} }})
	reg, err := NewRegistry(mutating, delegation)
	require.NoError(t, err)
	sub := Invocation{Identity: Identity{Role: RoleSubagent, AgentID: "s"}, DelegationDepth: 1}
	assert.Contains(t, reg.Invoke(context.Background(), sub, "greet", json.RawMessage(`{"name":"a"}`)).Content, "permission_denied")
	assert.Contains(t, reg.Invoke(context.Background(), Invocation{Identity: Identity{Role: RoleMain}, PlanMode: true}, "greet", json.RawMessage(`{"name":"a"}`)).Content, "permission_denied")
	assert.Equal(t, "nested", reg.Invoke(context.Background(), sub, "nest", json.RawMessage(`{"name":"a"}`)).Content)
	assert.False(t, ran)
	assert.Contains(t, mutating.RefuseNested(Invocation{}).Content, "greet is not available to a subagent", "without RefuseNested: the guard's answer")
}

func TestDefineSummarizesCalls(t *testing.T) {
	tool := greet(ReadOnly, nil)
	assert.Equal(t, "greet ann", tool.SummarizeCall(json.RawMessage(`{"name":"ann"}`)))
	assert.Equal(t, "greet ann", tool.SummarizeCall(json.RawMessage(`{"name":"ann","times":"x"}`)), "a field of the wrong type stays zero")
	assert.Equal(t, "not json", tool.SummarizeCall(json.RawMessage("not   json")), "not JSON: the arguments as they are")
	plain := Define(Def[greetParams]{Name: "greet", Contract: greetContract})
	assert.Equal(t, `{"name": "ann"}`, plain.SummarizeCall(json.RawMessage("{\"name\":\n \"ann\"}")))
}

// A contract built for another params type is refused with the tool.
func TestDefineRefusesAContractOfAnotherType(t *testing.T) {
	type other struct {
		X string `json:"x"`
	}
	tool := Define(Def[other]{Name: "odd", Contract: greetContract})
	_, err := NewRegistry(tool)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "odd decodes its arguments into tools.other, but its contract describes tools.greetParams")
	_, err = NewRegistry(Define(Def[other]{Name: "none"}))
	assert.ErrorContains(t, err, "none has no contract")
}
