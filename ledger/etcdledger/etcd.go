// Package etcdledger is the privacy-budget ledger on etcd, for a fleet of
// proxies that share one budget. It implements ledger.Store with the same
// accounting as the Badger ledger (ledger.Decide): a charge reads the totals
// and the budgets set in SQL, decides, and writes the entry and the new
// totals in one etcd transaction that succeeds only if none of the keys it
// read has changed since (a compare on each key's mod revision), and is
// retried otherwise. etcd commits a transaction through Raft with its WAL
// fsynced on a quorum, so a charge is durable when Charge returns.
package etcdledger

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/dpproxy/dpproxy/ledger"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Config configures Open.
type Config struct {
	// Endpoints are the etcd client URLs (policy: ledger.etcd.endpoints).
	Endpoints []string
	// Prefix is prepended to every key, so that one etcd cluster can hold
	// several ledgers; "" means "dpproxy".
	Prefix string
	// DialTimeout bounds connecting; 0 means 5 s.
	DialTimeout time.Duration
	// Logger; nil means slog.Default().
	Logger *slog.Logger
}

// Ledger is a ledger.Store on etcd. It is safe for concurrent use, also by
// several processes on the same etcd cluster and prefix.
type Ledger struct {
	cli    *clientv3.Client
	prefix string
	log    *slog.Logger
}

var _ ledger.Store = (*Ledger)(nil)

const (
	formatName    = "dpproxy-ledger-etcd"
	formatVersion = 1
)

type formatMarker struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
}

// Open connects to etcd and checks (or, on an empty prefix, writes) the
// ledger's format marker. An unreachable cluster is an error: the proxy must
// not start without its ledger.
func Open(ctx context.Context, cfg Config) (*Ledger, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("etcdledger: no etcd endpoints given")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	prefix := cfg.Prefix
	if prefix == "" {
		prefix = "dpproxy"
	}
	timeout := cfg.DialTimeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: cfg.Endpoints, DialTimeout: timeout, Logger: zap.NewNop(), Context: ctx})
	if err != nil {
		return nil, fmt.Errorf("etcdledger: connect to %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	l := &Ledger{cli: cli, prefix: strings.TrimSuffix(prefix, "/") + "/", log: log.With("component", "ledger", "store", "etcd")}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := l.checkFormat(cctx); err != nil {
		_ = cli.Close()
		return nil, fmt.Errorf("etcdledger: open the ledger at %s (prefix %s): %w", strings.Join(cfg.Endpoints, ","), l.prefix, err)
	}
	return l, nil
}

func (l *Ledger) checkFormat(ctx context.Context) error {
	key := l.prefix + "m/format"
	raw, err := json.Marshal(formatMarker{Format: formatName, Version: formatVersion})
	if err != nil {
		return err
	}
	resp, err := l.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(raw))).
		Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return err
	}
	if resp.Succeeded {
		l.log.Info("created a new privacy-budget ledger on etcd", "prefix", l.prefix)
		return nil
	}
	var m formatMarker
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) != 1 || json.Unmarshal(kvs[0].Value, &m) != nil || m.Format != formatName {
		return fmt.Errorf("the prefix holds something that is not a dpproxy ledger")
	}
	if m.Version > formatVersion {
		return fmt.Errorf("the ledger has format version %d, newer than this dpproxy reads (%d)", m.Version, formatVersion)
	}
	return nil
}

// Close disconnects. Charges already returned are committed in etcd.
func (l *Ledger) Close() error {
	if err := l.cli.Close(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("etcdledger: close: %w", err)
	}
	return nil
}

// Keys. Names are path-escaped, so that no user, role or namespace name can
// contain the separator.
func esc(s string) string { return url.PathEscape(s) }

func (l *Ledger) keyEntry(id string) string        { return l.prefix + "e/" + id }
func (l *Ledger) prefixIndex(user string) string   { return l.prefix + "i/" + esc(user) + "/" }
func (l *Ledger) keyUser(user string) string       { return l.prefix + "u/" + esc(user) }
func (l *Ledger) keyPool(role string) string       { return l.prefix + "p/" + esc(role) }
func (l *Ledger) keyRoleBudget(r string) string    { return l.prefix + "b/r/" + esc(r) }
func (l *Ledger) keyUserBudget(u string) string    { return l.prefix + "b/u/" + esc(u) }
func (l *Ledger) prefixKV(namespace string) string { return l.prefix + "k/" + esc(namespace) + "/" }

// newID returns an entry ID in the Badger ledger's format: 32 hex digits of
// big-endian Unix nanoseconds and 8 random bytes, so IDs sort by time (across
// proxies, as far as their clocks agree) and never collide.
func newID() (string, time.Time, error) {
	now := time.Now()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixNano()))
	if _, err := rand.Read(b[8:]); err != nil {
		return "", time.Time{}, fmt.Errorf("draw a random entry ID: %w", err)
	}
	return hex.EncodeToString(b[:]), time.Unix(0, now.UnixNano()), nil
}

func idTime(id string) time.Time {
	b, err := hex.DecodeString(id)
	if err != nil || len(b) != 16 {
		return time.Time{}
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(b[:8])))
}
