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
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	Status       Status   `json:"status"`
	Details      string   `json:"details,omitempty"`
	Dependencies []string `json:"dependencies,omitempty"`
	NextAction   string   `json:"next_action,omitempty"`
	Evidence     []string `json:"evidence,omitempty"`
}

// Plan is the complete normalized plan: the object the model receives as the
// update_plan result, the object saved to plan.json and the object the plan
// window renders. An empty plan has Version 0 or no items.
type Plan struct {
	Version   int    `json:"version"`
	UpdatedAt string `json:"updatedAt"`
	Reason    string `json:"reason"`
	Items     []Item `json:"items"`
}
