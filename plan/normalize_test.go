package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func item(id string, st Status) Item {
	it := Item{ID: id, Title: "Title of " + id, Status: st}
	if st != Done {
		it.NextAction = "do " + id
	}
	return it
}

func args(items ...Item) UpdateArgs { return UpdateArgs{Reason: "test plan", Items: items} }

func with(it Item, f func(*Item)) Item { f(&it); return it }

func TestNormalizeRejects(t *testing.T) {
	many := make([]Item, MaxItems+1)
	for i := range many {
		many[i] = item(fmt.Sprintf("s%d", i), Pending)
	}
	tests := []struct {
		name string
		in   UpdateArgs
		want []string // every one must appear in the error
	}{
		{"too many items", args(many...), []string{"the plan has 21 items; the limit is 20"}},
		{"missing reason", UpdateArgs{Reason: "  ", Items: []Item{item("a", Pending)}}, []string{"reason is required"}},
		{"long reason", UpdateArgs{Reason: strings.Repeat("r", MaxReasonLen+1), Items: []Item{item("a", Pending)}}, []string{"reason is 201 characters; the limit is 200"}},
		{"empty id", args(item(" ", Pending)), []string{"items[0]: id is required"}},
		{"id with space", args(item("a b", Pending)), []string{`items[0]: id "a b" is not valid`}},
		{"id starting with dash", args(item("-a", Pending)), []string{`items[0]: id "-a" is not valid`}},
		{"id too long", args(item(strings.Repeat("x", MaxIDLen+1), Pending)), []string{"is not valid: use 1-40 letters"}},
		{"duplicate id", args(item("a", Pending), item("b", Pending), item("a", Done)), []string{`items[2]: id "a" is already used by items[0]`}},
		{"missing title", args(with(item("a", Pending), func(it *Item) { it.Title = "\n" })), []string{`item "a": title is required`}},
		{"long title", args(with(item("a", Pending), func(it *Item) { it.Title = strings.Repeat("é", MaxTitleLen+1) })), []string{`item "a": title is 121 characters; the limit is 120`}},
		{"missing status", args(item("a", "")), []string{`item "a": status is required`}},
		{"unknown status", args(item("a", "started")), []string{`item "a": status "started" is not one of pending, in_progress, blocked, done`}},
		{"two in_progress", args(item("a", InProgress), item("b", Done), item("c", InProgress)), []string{`item "a", item "c" are all in_progress; keep at most one item in_progress`}},
		{"pending without next_action", args(with(item("a", Pending), func(it *Item) { it.NextAction = " " })), []string{`item "a": next_action is required when status is pending`}},
		{"in_progress without next_action", args(with(item("a", InProgress), func(it *Item) { it.NextAction = "" })), []string{`item "a": next_action is required when status is in_progress`}},
		{"blocked without next_action", args(with(item("a", Blocked), func(it *Item) { it.NextAction = "" })), []string{`item "a": next_action is required when status is blocked`}},
		{"long details", args(with(item("a", Pending), func(it *Item) { it.Details = strings.Repeat("d", MaxDetailsLen+1) })), []string{`item "a": details are 601 characters; the limit is 600`}},
		{"long next_action", args(with(item("a", Pending), func(it *Item) { it.NextAction = strings.Repeat("n", MaxNextActionLen+1) })), []string{`item "a": next_action is 201 characters; the limit is 200`}},
		{"too much evidence", args(with(item("a", Done), func(it *Item) {
			for i := 0; i <= MaxEvidence; i++ {
				it.Evidence = append(it.Evidence, fmt.Sprintf("e%d", i))
			}
		})), []string{`item "a": 9 evidence entries; the limit is 8`}},
		{"long evidence", args(with(item("a", Done), func(it *Item) { it.Evidence = []string{"ok", strings.Repeat("e", MaxEvidenceLen+1)} })), []string{`item "a": evidence[1] is 201 characters; the limit is 200`}},
		{"unknown dependency", args(item("inspect", Done), with(item("verify", Pending), func(it *Item) { it.Dependencies = []string{"inspect", "impl"} })), []string{`item "verify": dependency "impl" does not exist in this plan`}},
		{"self dependency", args(with(item("a", Pending), func(it *Item) { it.Dependencies = []string{"a"} })), []string{`item "a": depends on itself`}},
		{"two-item cycle", args(
			with(item("a", Pending), func(it *Item) { it.Dependencies = []string{"b"} }),
			with(item("b", Pending), func(it *Item) { it.Dependencies = []string{"a"} }),
		), []string{`item "a": dependency cycle a -> b -> a`}},
		{"longer cycle", args(
			item("x", Done),
			with(item("a", Pending), func(it *Item) { it.Dependencies = []string{"x", "c"} }),
			with(item("b", Pending), func(it *Item) { it.Dependencies = []string{"a"} }),
			with(item("c", Pending), func(it *Item) { it.Dependencies = []string{"b"} }),
		), []string{"dependency cycle a -> c -> b -> a"}},
		{"several problems at once", args(item("a", "nope"), item("a", Pending)), []string{`item "a": status "nope"`, `items[1]: id "a" is already used`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Normalize(tc.in, nil, t0)
			require.Error(t, err)
			var ve *ValidationError
			require.True(t, errors.As(err, &ve), "want a *ValidationError, got %T", err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestNormalizeAccepts(t *testing.T) {
	tests := []struct {
		name string
		in   UpdateArgs
		want []Item
	}{
		{"empty plan", args(), []Item{}},
		{"twenty items", func() UpdateArgs {
			var its []Item
			for i := 0; i < MaxItems; i++ {
				its = append(its, item(fmt.Sprintf("step.%d", i), Pending))
			}
			return args(its...)
		}(), nil},
		{"trims, lower-cases status, drops empty optional fields",
			args(Item{ID: " inspect ", Title: "  Read\tthe code\n", Status: " DONE ", Details: "  \n ", NextAction: " ", Dependencies: []string{" ", ""}, Evidence: []string{" ", "\n"}}),
			[]Item{{ID: "inspect", Title: "Read the code", Status: Done}}},
		{"dedupes dependencies keeping order",
			args(item("a", Done), item("b", Done), with(item("c", Pending), func(it *Item) { it.Dependencies = []string{"b", " a", "b", "a "} })),
			[]Item{item("a", Done), item("b", Done), with(item("c", Pending), func(it *Item) { it.Dependencies = []string{"b", "a"} })}},
		{"keeps item order and multi-line details",
			args(with(item("z", Pending), func(it *Item) { it.Details = "line one  \r\nline\ttwo\n\nlast" }), item("a", Done)),
			[]Item{with(item("z", Pending), func(it *Item) { it.Details = "line one\nline two\n\nlast" }), item("a", Done)}},
		{"evidence trimmed, empty entries dropped, line breaks become spaces",
			args(with(item("a", Done), func(it *Item) { it.Evidence = []string{" go test ./plan ", "", "a\nb"} })),
			[]Item{with(item("a", Done), func(it *Item) { it.Evidence = []string{"go test ./plan", "a b"} })}},
		{"one in_progress and a blocked item with diamond deps",
			args(item("a", Done),
				with(item("b", InProgress), func(it *Item) { it.Dependencies = []string{"a"} }),
				with(item("c", Blocked), func(it *Item) { it.Dependencies = []string{"a"} }),
				with(item("d", Pending), func(it *Item) { it.Dependencies = []string{"b", "c"} })), nil},
		{"done item may keep a next_action", args(with(item("a", Done), func(it *Item) { it.NextAction = "nothing" })), nil},
		{"limits are inclusive", args(with(item(strings.Repeat("i", MaxIDLen), Done), func(it *Item) {
			it.Title = strings.Repeat("t", MaxTitleLen)
			it.Details = strings.Repeat("d", MaxDetailsLen)
			it.NextAction = strings.Repeat("n", MaxNextActionLen)
			for i := 0; i < MaxEvidence; i++ {
				it.Evidence = append(it.Evidence, strings.Repeat("e", MaxEvidenceLen))
			}
		})), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prev := &Plan{Version: 6}
			p, err := Normalize(tc.in, prev, t0.Add(1500*time.Millisecond))
			require.NoError(t, err)
			assert.Equal(t, 7, p.Version)
			assert.Equal(t, "2025-01-01T00:00:01.500Z", p.UpdatedAt)
			assert.Equal(t, "test plan", p.Reason)
			want := tc.want
			if want == nil {
				want = tc.in.Items
			}
			assert.Equal(t, want, p.Items)
			assert.NoError(t, p.Validate(), "a normalized plan is valid")
			again, err := Normalize(p.Args(), &p, t0)
			require.NoError(t, err)
			assert.Equal(t, p.Items, again.Items, "normalization is idempotent")
		})
	}
}

func TestNormalizeVersionAndTime(t *testing.T) {
	p, err := Normalize(args(item("a", Pending)), nil, time.Date(2025, 3, 4, 5, 6, 7, 891_000_000, time.FixedZone("X", 3600)))
	require.NoError(t, err)
	assert.Equal(t, 1, p.Version)
	assert.Equal(t, "2025-03-04T04:06:07.891Z", p.UpdatedAt, "UTC with milliseconds")
	p2, err := Normalize(args(item("a", Done)), &p, t0)
	require.NoError(t, err)
	assert.Equal(t, 2, p2.Version)
}

func TestNormalizeDoesNotAliasInput(t *testing.T) {
	in := args(with(item("a", Done), func(it *Item) { it.Evidence = []string{"x"} }), with(item("b", Pending), func(it *Item) { it.Dependencies = []string{"a"} }))
	p, err := Normalize(in, nil, t0)
	require.NoError(t, err)
	in.Items[0].Evidence[0] = "changed"
	in.Items[1].Dependencies[0] = "changed"
	assert.Equal(t, "x", p.Items[0].Evidence[0])
	assert.Equal(t, "a", p.Items[1].Dependencies[0])
}

func TestValidateRejectsUnnormalizedOrBadMeta(t *testing.T) {
	good, err := Normalize(args(item("a", Pending)), nil, t0)
	require.NoError(t, err)
	require.NoError(t, good.Validate())
	tests := []struct {
		name string
		mod  func(*Plan)
		want string
	}{
		{"version 0", func(p *Plan) { p.Version = 0 }, "version 0 must be at least 1"},
		{"bad time", func(p *Plan) { p.UpdatedAt = "yesterday" }, `updatedAt "yesterday"`},
		{"untrimmed title", func(p *Plan) { p.Items[0].Title += " " }, "plan is not normalized"},
		{"rule broken", func(p *Plan) { p.Items[0].NextAction = "" }, "next_action is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := good.Clone()
			tc.mod(&p)
			err := p.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestValidationErrorListsAtMostTen(t *testing.T) {
	var its []Item
	for i := 0; i < 15; i++ {
		its = append(its, item(fmt.Sprintf("s%d", i), "bad"))
	}
	_, err := Normalize(args(its...), nil, t0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "and 5 more problems")
}

func TestPlanJSONShape(t *testing.T) {
	p, err := Normalize(args(item("a", Done), with(item("b", Pending), func(it *Item) {
		it.Details = "d"
		it.Dependencies = []string{"a"}
		it.Evidence = []string{"e"}
	})), nil, t0)
	require.NoError(t, err)
	got := ResultJSON(p)
	assert.JSONEq(t, `{"version":1,"updatedAt":"2025-01-01T00:00:00.000Z","reason":"test plan","items":[
		{"id":"a","title":"Title of a","status":"done"},
		{"id":"b","title":"Title of b","status":"pending","details":"d","dependencies":["a"],"next_action":"do b","evidence":["e"]}]}`, got)
	var empty Plan
	assert.Contains(t, ResultJSON(empty), `"items":[]`, "an empty plan has items [], never null")
	var round Plan
	require.NoError(t, json.Unmarshal([]byte(got), &round))
	assert.Equal(t, p, round)
}
