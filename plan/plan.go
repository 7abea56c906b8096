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
type Item struct {
	ID           string   `json:"id" msgpack:"id"`
	Title        string   `json:"title" msgpack:"title"`
	Status       Status   `json:"status" msgpack:"status"`
	Details      string   `json:"details,omitempty" msgpack:"details,omitempty"`
	Dependencies []string `json:"dependencies,omitempty" msgpack:"dependencies,omitempty"`
	NextAction   string   `json:"next_action,omitempty" msgpack:"next_action,omitempty"`
	Evidence     []string `json:"evidence,omitempty" msgpack:"evidence,omitempty"`
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
