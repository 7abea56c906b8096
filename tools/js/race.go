//go:build race

package js

// jsRaceBuild: the race detector's shadow memory counts against the worker's
// OS memory limit, so race-enabled builds (tests) get a larger ceiling.
const jsRaceBuild = true
