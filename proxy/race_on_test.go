//go:build race

package proxy_test

// raceEnabled: the race detector slows the embedded SQLite tenfold, so the
// end-to-end audit takes fewer samples (it still detects a 1.5ε leak).
const raceEnabled = true
