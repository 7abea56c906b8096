package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
)

// Def declares one tool for Define: the name and access class the guard
// reads, the argument contract (built by NewContract over the same P), how
// a call reads in the transcript, and what a call does with its arguments.
type Def[P any] struct {
	Name   string
	Access Access
	// Contract is the tool's NewContract[P]: its schema and description.
	Contract *Contract
	// Run does one call with arguments that decoded strictly into P and
	// passed P's Validate. An error result it returns (ErrorResult,
	// CodedErrorResult) says only what went wrong: Define puts the tool's
	// name in front. A returned error is a real fault, which the registry
	// reports ("<name> failed: …", or "<name> was cancelled").
	Run func(ctx context.Context, inv Invocation, p P) (Result, error)
	// Summarize is the transcript line of a call (`src/x.go 12–40`), from
	// its arguments decoded leniently: a field of the wrong type stays zero.
	// Nil, or arguments that are not JSON: the arguments themselves, shortened.
	Summarize func(p P) string
	// RefuseNested answers a Delegation tool's call inside a subagent
	// (nil: the guard's permission_denied).
	RefuseNested func(inv Invocation) Result
	// ArgsCode, when set, makes arguments that do not decode or validate a
	// CodedErrorResult with this code instead of an ErrorResult.
	ArgsCode string
	// ArgsNote is added to the message of arguments that do not decode or
	// validate, e.g. "; the plan was not changed".
	ArgsNote string
}

// Validator is implemented by a params struct (through its pointer) that
// checks the decoded arguments beyond their JSON types: a required text
// that is blank, a count out of range. Validate may also normalize what it
// checked (trim a text, fill a default). Its error is what the model reads,
// after the tool's name.
type Validator interface {
	Validate() error
}

// Declared is a tool made by Define. It implements Tool, Contracted,
// CallSummarizer and NestedRefuser; a tool with more state than its
// dependencies (a worker pool, a lock) embeds it in its own type.
type Declared[P any] struct {
	def      Def[P]
	contract *Contract
}

// Define makes the tool d declares: one source for its name, contract,
// access, transcript line and run function. Its Run decodes the arguments
// strictly into P, calls P's Validate, runs d.Run, and names the tool in
// front of every error result: a tool writes only its sentence ("path is
// required"), the model reads "read_file: path is required". The guard is
// the registry's (Invoke applies it before Run, to the registered tool).
//
// A Contract built for another type than P makes the contract's Err say
// so, and NewRegistry refuses the tool.
func Define[P any](d Def[P]) *Declared[P] {
	t := &Declared[P]{def: d, contract: d.Contract}
	switch want := reflect.TypeFor[P](); {
	case d.Contract == nil:
		t.contract = failedContract(fmt.Errorf("%s has no contract", d.Name))
	case d.Contract.params != want:
		t.contract = failedContract(fmt.Errorf("%s decodes its arguments into %s, but its contract describes %s", d.Name, want, d.Contract.params))
	}
	return t
}

// failedContract is a contract that reports err and advertises nothing.
func failedContract(err error) *Contract {
	c := &Contract{}
	c.once.Do(func() { c.err = err })
	return c
}

func (t *Declared[P]) Name() string                { return t.def.Name }
func (t *Declared[P]) Description() string         { return t.contract.Description() }
func (t *Declared[P]) Parameters() json.RawMessage { return t.contract.Parameters() }
func (t *Declared[P]) Access() Access              { return t.def.Access }

// Contract implements Contracted.
func (t *Declared[P]) Contract() *Contract { return t.contract }

// SummarizeCall implements CallSummarizer. Arguments that are not JSON
// at all are shown as they are.
func (t *Declared[P]) SummarizeCall(args json.RawMessage) string {
	if t.def.Summarize == nil || !json.Valid(args) {
		return rawCallSummary(args)
	}
	var p P
	_ = json.Unmarshal(args, &p)
	return t.def.Summarize(p)
}

// RefuseNested implements NestedRefuser.
func (t *Declared[P]) RefuseNested(inv Invocation) Result {
	if t.def.RefuseNested == nil {
		return deniedToSubagent(t.def.Name)
	}
	return t.def.RefuseNested(inv)
}

// Run implements Tool.
func (t *Declared[P]) Run(ctx context.Context, inv Invocation, args json.RawMessage) (Result, error) {
	var p P
	err := DecodeArgs(args, &p)
	if v, ok := any(&p).(Validator); ok && err == nil {
		err = v.Validate()
	}
	if err != nil {
		if t.def.ArgsCode != "" {
			return CodedErrorResult(t.def.ArgsCode, "%s: %v%s", t.def.Name, err, t.def.ArgsNote), nil
		}
		return ErrorResult("%s: %v%s", t.def.Name, err, t.def.ArgsNote), nil
	}
	res, err := t.def.Run(ctx, inv, p)
	if err != nil {
		return res, err
	}
	return res.named(t.def.Name), nil
}
