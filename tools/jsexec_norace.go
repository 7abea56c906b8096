//go:build !race

package tools

const jsRaceBuild = false
