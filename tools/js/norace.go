//go:build !race

package js

const jsRaceBuild = false
