package admission

import (
	"fmt"
	"log/slog"
	"unicode/utf8"
)

// MaxLoggedBytes is how much of one user-controlled string (a user name, a
// database name, SQL text, a client parameter) goes into a log line.
const MaxLoggedBytes = 128

// Clip shortens a user-controlled string for a log line or an error
// message: at most MaxLoggedBytes of it, cut on a rune boundary, with the
// cut marked and the full length given. Without it, a client could make
// every failed login write megabytes to the log.
func Clip(s string) string { return ClipN(s, MaxLoggedBytes) }

// String is a slog attribute holding Clip(value).
func String(key, value string) slog.Attr { return slog.String(key, Clip(value)) }

// ClipN is Clip with another bound, for text that is mostly ours but may
// carry client bytes (a library's log message quoting a packet).
func ClipN(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…[%d bytes]", s[:cut], len(s))
}

// MaxLoggedError bounds an error's text in a log line: errors quote what
// the client sent (an unknown database's name, a statement).
const MaxLoggedError = 1 << 10

// Error is a slog "error" attribute holding err's text, clipped to
// MaxLoggedError.
func Error(err error) slog.Attr {
	if err == nil {
		return slog.String("error", "<nil>")
	}
	return slog.String("error", ClipN(err.Error(), MaxLoggedError))
}
