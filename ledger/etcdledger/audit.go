package etcdledger

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/dpproxy/dpproxy/ledger"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// UserSpent returns what user has spent.
func (l *Ledger) UserSpent(ctx context.Context, user string) (ledger.Spent, error) {
	s, err := l.spent(ctx, l.keyUser(user))
	if err != nil {
		return s, fmt.Errorf("etcdledger: read the spending of user %s: %w", user, err)
	}
	return s, nil
}

// RoleSpent returns what the users of role have spent from its pool.
func (l *Ledger) RoleSpent(ctx context.Context, role string) (ledger.Spent, error) {
	s, err := l.spent(ctx, l.keyPool(role))
	if err != nil {
		return s, fmt.Errorf("etcdledger: read the pool spending of role %s: %w", role, err)
	}
	return s, nil
}

func (l *Ledger) spent(ctx context.Context, key string) (ledger.Spent, error) {
	var s ledger.Spent
	r, err := l.read(ctx, key)
	if err == nil {
		err = r.decode(key, &s)
	}
	return s, err
}

// Totals returns every user's and pool's spending.
func (l *Ledger) Totals(ctx context.Context) (users, roles map[string]ledger.Spent, err error) {
	if users, err = scanJSON[ledger.Spent](ctx, l, l.prefix+"u/"); err == nil {
		roles, err = scanJSON[ledger.Spent](ctx, l, l.prefix+"p/")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("etcdledger: read the totals: %w", err)
	}
	return users, roles, nil
}

// Entries returns the audit trail newest first, as ledger.Reader says.
func (l *Ledger) Entries(ctx context.Context, user string, limit int) ([]ledger.Entry, error) {
	opts := []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend)}
	if limit > 0 {
		opts = append(opts, clientv3.WithLimit(int64(limit)))
	}
	var out []ledger.Entry
	if user == "" {
		resp, err := l.cli.Get(ctx, l.prefix+"e/", opts...)
		if err != nil {
			return nil, fmt.Errorf("etcdledger: read the audit trail: %w", err)
		}
		for _, kv := range resp.Kvs {
			e, err := l.decodeEntry(kv.Key, kv.Value)
			if err != nil {
				return nil, fmt.Errorf("etcdledger: read the audit trail: %w", err)
			}
			out = append(out, e)
		}
		return out, nil
	}
	prefix := l.prefixIndex(user)
	resp, err := l.cli.Get(ctx, prefix, append(opts, clientv3.WithKeysOnly())...)
	if err != nil {
		return nil, fmt.Errorf("etcdledger: read the audit trail of user %s: %w", user, err)
	}
	// Fetch the entries in batches of one transaction each (etcd allows
	// 128 operations per transaction by default).
	for start := 0; start < len(resp.Kvs); start += 100 {
		batch := resp.Kvs[start:min(start+100, len(resp.Kvs))]
		keys := make([]string, len(batch))
		for i, kv := range batch {
			keys[i] = l.keyEntry(strings.TrimPrefix(string(kv.Key), prefix))
		}
		r, err := l.read(ctx, keys...)
		if err != nil {
			return nil, fmt.Errorf("etcdledger: read the audit trail of user %s: %w", user, err)
		}
		for _, k := range keys {
			if r[k].rev == 0 {
				return nil, fmt.Errorf("etcdledger: the index of user %s lists %s, which is missing", user, k)
			}
			e, err := l.decodeEntry([]byte(k), r[k].raw)
			if err != nil {
				return nil, fmt.Errorf("etcdledger: read the audit trail of user %s: %w", user, err)
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// Walk calls fn for every entry, oldest first, reading pages of 500 entries
// at the revision of the first page, so that the walk sees one snapshot.
func (l *Ledger) Walk(ctx context.Context, fn func(ledger.Entry) error) error {
	prefix := l.prefix + "e/"
	end := clientv3.GetPrefixRangeEnd(prefix)
	from, rev := prefix, int64(0)
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(500),
			clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := l.cli.Get(ctx, from, opts...)
		if err != nil {
			return fmt.Errorf("etcdledger: walk the audit trail: %w", err)
		}
		rev = resp.Header.Revision
		for _, kv := range resp.Kvs {
			e, err := l.decodeEntry(kv.Key, kv.Value)
			if err != nil {
				return fmt.Errorf("etcdledger: walk the audit trail: %w", err)
			}
			if err := fn(e); err != nil {
				return err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

func (l *Ledger) decodeEntry(key, value []byte) (ledger.Entry, error) {
	id := strings.TrimPrefix(string(key), l.prefix+"e/")
	var rec ledger.Record
	if err := json.Unmarshal(value, &rec); err != nil {
		return ledger.Entry{}, fmt.Errorf("entry %s: %w", id, err)
	}
	return rec.Entry(id, idTime(id)), nil
}

// scanJSON decodes every value under prefix, keyed by the unescaped rest of
// its key.
func scanJSON[T any](ctx context.Context, l *Ledger, prefix string) (map[string]T, error) {
	resp, err := l.cli.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	out := make(map[string]T, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		name, err := url.PathUnescape(strings.TrimPrefix(string(kv.Key), prefix))
		if err != nil {
			return nil, fmt.Errorf("malformed key %q: %w", kv.Key, err)
		}
		var v T
		if err := json.Unmarshal(kv.Value, &v); err != nil {
			return nil, fmt.Errorf("decode %q: %w", kv.Key, err)
		}
		out[name] = v
	}
	return out, nil
}
