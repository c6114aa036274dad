// Package ledger is dpproxy's durable privacy-budget ledger.
//
// Every differentially private answer is charged here before anything is
// released, and refunded if the backend query fails. The ledger keeps, per user
// and per role pool, running totals of the ε, δ and ρ spent, accounted as the
// tighter of basic and zCDP composition (account.go), the budgets DBAs set in
// SQL (budget.go), and an audit trail of every charge, refund, budget change
// and reset, which Export and Show write out for auditors. It lives in an
// embedded Badger store opened with synchronous writes, so a charge is on disk
// before Charge returns. Store is the interface the engine uses; package
// etcdledger implements it on etcd for fleets of proxies.
//
// The same store also holds small values other parts of dpproxy must keep
// durably (cached answers, trained models, budgets set in SQL): see Put, Get,
// List and Delete.
package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
)

// Options configure Open. The zero value is ready to use.
type Options struct {
	// Logger receives Badger's warnings and errors; its informational chatter
	// is logged at debug level. Nil means slog.Default().
	Logger *slog.Logger
	// InMemory keeps everything in memory and ignores the path. Tests only:
	// an in-memory ledger forgets every charge when it is closed.
	InMemory bool
	// ReadOnly opens an existing ledger for reading only: every write
	// fails. A ledger that was not closed cleanly (the proxy crashed) must
	// first be opened read-write once, which replays its log; the offline
	// tools should therefore open read-write (Badger's directory lock
	// already keeps them from running beside a live proxy).
	ReadOnly bool
}

// Ledger is a durable privacy-budget ledger. It is safe for concurrent use.
type Ledger struct {
	db   *badger.DB
	path string
	log  *slog.Logger
	// queue, quit and stopped drive the group-commit goroutine (commit.go).
	queue     chan *op
	quit      chan struct{}
	stopped   chan struct{}
	closeOnce sync.Once
	closeErr  error
	// lastNanos is the time component of the newest entry ID handed out, so
	// that IDs stay strictly increasing even if the wall clock steps back.
	lastNanos atomic.Int64
}

// formatName and formatVersion are written under keyFormat when a ledger is
// created, so that Open can tell a dpproxy ledger from any other directory or
// Badger store.
const (
	formatName    = "dpproxy-ledger"
	formatVersion = 1
)

type formatMarker struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
}

// Open opens the ledger at path, creating it if path does not exist or is an
// empty directory.
//
// A corrupt or unreadable ledger must stop the proxy with a clear message: it
// must never start with an empty ledger in place of a lost one, because that
// would silently hand every user a fresh budget. So Open refuses a non-empty
// directory without a Badger MANIFEST before Badger ever sees it (Badger
// would delete the table files its manifest does not list), fails with the
// path on any error Badger reports, and refuses a Badger store that lacks the
// ledger's format marker.
func Open(path string, opts Options) (*Ledger, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	logger = logger.With("component", "ledger")

	fresh := true
	if !opts.InMemory {
		var err error
		if fresh, err = inspectDir(path, opts.ReadOnly); err != nil {
			return nil, err
		}
	}

	bopts := badger.DefaultOptions(path).
		WithInMemory(opts.InMemory).
		WithReadOnly(opts.ReadOnly).
		// A charge must be durable before Charge returns: sync every commit.
		// The ledger groups concurrent charges into one commit (commit.go), so
		// this costs one sync per group, not per charge.
		WithSyncWrites(true).
		WithLogger(badgerLogger{logger}).
		// The ledger is small (a few hundred bytes per charge); Badger's
		// defaults are sized for databases of many gigabytes.
		WithMemTableSize(16 << 20).
		WithBlockCacheSize(32 << 20).
		WithValueLogFileSize(64 << 20).
		WithNumCompactors(2)
	if opts.InMemory {
		bopts = bopts.WithDir("").WithValueDir("")
	}
	db, err := badger.Open(bopts)
	if err != nil && opts.ReadOnly && truncateNeeded(err) {
		// After a crash Badger must replay and trim its log, which it
		// cannot do read-only; a read-write open does it without loss.
		return nil, fmt.Errorf("ledger: the ledger at %s was not closed cleanly and cannot be read "+
			"read-only until it is opened once read-write (with the proxy stopped): %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: cannot open the ledger at %s: %w", path, err)
	}
	l := &Ledger{db: db, path: path, log: logger,
		queue: make(chan *op), quit: make(chan struct{}), stopped: make(chan struct{})}
	if err := l.checkFormat(fresh); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := l.seedIDs(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("ledger: cannot read the audit trail of the ledger at %s: %w", path, err)
	}
	go l.commitLoop()
	return l, nil
}

// truncateNeeded reports Badger's ErrTruncateNeeded. Badger (v4.9.6) wraps
// it on the memtable path with y.Wrapf, which formats the cause into the
// message instead of wrapping it, so errors.Is alone does not find it.
func truncateNeeded(err error) bool {
	return errors.Is(err, badger.ErrTruncateNeeded) || strings.Contains(err.Error(), badger.ErrTruncateNeeded.Error())
}

// inspectDir decides whether path is a new ledger (it does not exist or is an
// empty directory) or an existing one, and refuses anything else before Badger
// touches it: Badger deletes table files its MANIFEST does not list, so handing
// it a directory whose MANIFEST is lost would destroy what is left.
func inspectDir(path string, readOnly bool) (fresh bool, err error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && readOnly:
		return false, fmt.Errorf("ledger: there is no ledger at %s", path)
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(path, 0o700); err != nil {
			return false, fmt.Errorf("ledger: cannot create the ledger directory %s: %w", path, err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("ledger: cannot read the ledger directory %s: %w", path, err)
	case !info.IsDir():
		return false, fmt.Errorf("ledger: %s is not a directory, so it cannot be a ledger", path)
	}
	names, err := os.ReadDir(path)
	if err != nil {
		return false, fmt.Errorf("ledger: cannot read the ledger directory %s: %w", path, err)
	}
	if len(names) == 0 && readOnly {
		return false, fmt.Errorf("ledger: %s is empty: there is no ledger to read", path)
	}
	if len(names) == 0 {
		return true, nil
	}
	if _, err := os.Stat(filepath.Join(path, badger.ManifestFilename)); err != nil {
		return false, fmt.Errorf("ledger: %s is not empty but holds no ledger (no Badger %s): "+
			"refusing to start, so that a lost ledger is not replaced by an empty one; "+
			"restore the ledger or point to an empty directory", path, badger.ManifestFilename)
	}
	return false, nil
}

// checkFormat writes the format marker into a fresh ledger and verifies it in
// an existing one.
func (l *Ledger) checkFormat(fresh bool) error {
	var marker formatMarker
	found := false
	err := l.db.View(func(txn *badger.Txn) error {
		var err error
		found, err = getJSON(txn, keyFormat(), &marker)
		return err
	})
	if err != nil {
		return fmt.Errorf("ledger: cannot read the format marker of the ledger at %s: %w", l.path, err)
	}
	switch {
	case !found && fresh:
		marker = formatMarker{Format: formatName, Version: formatVersion}
		err := l.db.Update(func(txn *badger.Txn) error { return putJSON(txn, keyFormat(), marker) })
		if err != nil {
			return fmt.Errorf("ledger: cannot initialise a new ledger at %s: %w", l.path, err)
		}
		l.log.Info("created a new privacy-budget ledger", "path", l.path)
		return nil
	case !found:
		return fmt.Errorf("ledger: %s is a Badger store but not a dpproxy ledger (no format marker): "+
			"refusing to start, so that a lost ledger is not replaced by an empty one; "+
			"if it is a new ledger that never recorded a charge, remove the directory", l.path)
	case marker.Format != formatName:
		return fmt.Errorf("ledger: %s holds format %q, not a dpproxy ledger", l.path, marker.Format)
	case marker.Version > formatVersion:
		return fmt.Errorf("ledger: the ledger at %s has format version %d, newer than this dpproxy reads (%d)",
			l.path, marker.Version, formatVersion)
	}
	return nil
}

// Close flushes and closes the ledger. Charges already returned are on disk
// whether or not Close is called.
// Calls after Close return ErrClosed; closing twice is harmless.
func (l *Ledger) Close() error {
	l.closeOnce.Do(func() {
		close(l.quit)
		<-l.stopped // the group in flight is committed and answered
		if err := l.db.Close(); err != nil {
			l.closeErr = fmt.Errorf("ledger: close %s: %w", l.path, err)
		}
	})
	return l.closeErr
}

// getJSON reads key into v. It reports false, and no error, when the key is
// absent.
func getJSON(txn *badger.Txn, key []byte, v any) (bool, error) {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	err = item.Value(func(raw []byte) error { return json.Unmarshal(raw, v) })
	if err != nil {
		return false, fmt.Errorf("decode %q: %w", key, err)
	}
	return true, nil
}

func putJSON(txn *badger.Txn, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %q: %w", key, err)
	}
	return txn.Set(key, raw)
}
