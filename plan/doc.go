// Package plan owns the durable todo plan: its types, validation and
// normalization, atomic persistence in the per-workspace state dir, the
// synthetic restore-as-tool-result messages, the update_plan tool, and pure
// text rendering of a plan for the plan window.
package plan
