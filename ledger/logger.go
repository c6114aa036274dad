package ledger

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// badgerLogger adapts slog to badger.Logger. Badger narrates its routine work
// (compactions, replay, flushes) at info level; an operator of the proxy does
// not need that, so it goes to debug. Warnings and errors keep their level.
type badgerLogger struct{ l *slog.Logger }

func (b badgerLogger) Errorf(format string, args ...any) {
	b.log(slog.LevelError, format, args)
}

func (b badgerLogger) Warningf(format string, args ...any) {
	b.log(slog.LevelWarn, format, args)
}

func (b badgerLogger) Infof(format string, args ...any) {
	b.log(slog.LevelDebug, format, args)
}

func (b badgerLogger) Debugf(format string, args ...any) {
	b.log(slog.LevelDebug, format, args)
}

func (b badgerLogger) log(level slog.Level, format string, args []any) {
	ctx := context.Background()
	if !b.l.Enabled(ctx, level) {
		return
	}
	msg := strings.TrimSpace(fmt.Sprintf(format, args...))
	b.l.Log(ctx, level, "badger: "+msg)
}
