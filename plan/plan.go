package plan

// Status is a plan item's state.
type Status string

const (
	Pending    Status = "pending"
	InProgress Status = "in_progress"
	Blocked    Status = "blocked"
	Done       Status = "done"
)

// Item is one normalized todo item. Optional fields are omitted from JSON
// only when absent; everything present is always sent in full.
// The jsonschema tags describe the fields in the update_plan schema; they
// are templates over the bounds (see update_plan.go).
type Item struct {
	ID           string   `json:"id" msgpack:"id" jsonschema:"Stable human-readable id, 1-{{.MaxIDLen}} of A-Z a-z 0-9 . _ - starting with a letter or digit (e.g. inspect, implement, verify)."`
	Title        string   `json:"title" msgpack:"title" jsonschema:"Short title (at most {{.MaxTitleLen}} characters)."`
	Status       Status   `json:"status" msgpack:"status" jsonschema:"At most one item is in_progress."`
	Details      string   `json:"details,omitempty" msgpack:"details,omitempty" jsonschema:"Optional details (at most {{.MaxDetailsLen}} characters)."`
	Dependencies []string `json:"dependencies,omitempty" msgpack:"dependencies,omitempty" jsonschema:"Optional ids of other items in this plan that must be done first."`
	NextAction   string   `json:"next_action,omitempty" msgpack:"next_action,omitempty" jsonschema:"The next concrete step (at most {{.MaxNextActionLen}} characters); required unless status is done."`
	Evidence     []string `json:"evidence,omitempty" msgpack:"evidence,omitempty" jsonschema:"Optional concise proof such as a command or file:line (at most {{.MaxEvidence}} entries of {{.MaxEvidenceLen}} characters)."`
}

// Plan is the complete normalized plan: the object the model receives as the
// update_plan result, the object saved to plan.json and the object the plan
// window renders. An empty plan has Version 0 or no items. The msgpack tags
// match the JSON ones, so require("fido").status().plan has the same fields.
type Plan struct {
	Version   int    `json:"version" msgpack:"version"`
	UpdatedAt string `json:"updatedAt" msgpack:"updatedAt"`
	Reason    string `json:"reason" msgpack:"reason"`
	Items     []Item `json:"items" msgpack:"items"`
}
