//go:build race

package parser

// raceEnabled: the race detector slows the parsers several times over.
const raceEnabled = true
