package ledger

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// UserSpent returns what user has spent over the charges not refunded.
func (l *Ledger) UserSpent(ctx context.Context, user string) (Spent, error) {
	s, err := l.totals(ctx, keyUserTotals(user))
	if err != nil {
		return Spent{}, fmt.Errorf("ledger: read the spending of user %s: %w", user, err)
	}
	return s, nil
}

// RoleSpent returns what the users of role have spent from the role's shared
// pool (charges made without a pool limit are not counted).
func (l *Ledger) RoleSpent(ctx context.Context, role string) (Spent, error) {
	s, err := l.totals(ctx, keyPoolTotals(role))
	if err != nil {
		return Spent{}, fmt.Errorf("ledger: read the pool spending of role %s: %w", role, err)
	}
	return s, nil
}

func (l *Ledger) totals(ctx context.Context, key []byte) (Spent, error) {
	if err := ctx.Err(); err != nil {
		return Spent{}, err
	}
	var s Spent
	err := l.db.View(func(txn *badger.Txn) error {
		_, err := getJSON(txn, key, &s)
		return err
	})
	return s, err
}

// Entries returns the audit trail newest first: of one user, or of everyone
// when user is "". limit ≤ 0 means no limit.
func (l *Ledger) Entries(ctx context.Context, user string, limit int) ([]Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ledger: read the audit trail: %w", err)
	}
	var out []Entry
	err := l.db.View(func(txn *badger.Txn) error {
		if user == "" {
			return l.scanAll(ctx, txn, limit, &out)
		}
		return l.scanUser(ctx, txn, user, limit, &out)
	})
	if err != nil {
		if user == "" {
			return nil, fmt.Errorf("ledger: read the audit trail: %w", err)
		}
		return nil, fmt.Errorf("ledger: read the audit trail of user %s: %w", user, err)
	}
	return out, nil
}

func (l *Ledger) scanAll(ctx context.Context, txn *badger.Txn, limit int, out *[]Entry) error {
	prefix := []byte(tagEntry)
	it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: prefix, PrefetchValues: true, PrefetchSize: 64})
	defer it.Close()
	for it.Seek(seekLast(prefix)); it.ValidForPrefix(prefix); it.Next() {
		if limit > 0 && len(*out) >= limit {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		id, err := idFromKey(it.Item().Key(), len(prefix))
		if err != nil {
			return err
		}
		var rec Record
		if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &rec) }); err != nil {
			return fmt.Errorf("entry %s: %w", id, err)
		}
		*out = append(*out, rec.Entry(id.String(), id.time()))
	}
	return nil
}

func (l *Ledger) scanUser(ctx context.Context, txn *badger.Txn, user string, limit int, out *[]Entry) error {
	prefix := prefixIndex(user)
	it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: prefix})
	defer it.Close()
	for it.Seek(seekLast(prefix)); it.ValidForPrefix(prefix); it.Next() {
		if limit > 0 && len(*out) >= limit {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		id, err := idFromKey(it.Item().Key(), len(prefix))
		if err != nil {
			return err
		}
		var rec Record
		found, err := getJSON(txn, keyEntry(id), &rec)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("the index lists entry %s, which is missing", id)
		}
		*out = append(*out, rec.Entry(id.String(), id.time()))
	}
	return nil
}

func idFromKey(key []byte, prefixLen int) (entryID, error) {
	var id entryID
	if len(key) != prefixLen+idLen {
		return id, fmt.Errorf("malformed ledger key %q", key)
	}
	copy(id[:], key[prefixLen:])
	return id, nil
}

// Walk calls fn for every entry of the audit trail, oldest first, until fn
// returns an error, which Walk returns. It reads one consistent snapshot.
func (l *Ledger) Walk(ctx context.Context, fn func(Entry) error) error {
	prefix := []byte(tagEntry)
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 64})
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			id, err := idFromKey(it.Item().Key(), len(prefix))
			if err != nil {
				return err
			}
			var rec Record
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &rec) }); err != nil {
				return fmt.Errorf("entry %s: %w", id, err)
			}
			if err := fn(rec.Entry(id.String(), id.time())); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ledger: walk the audit trail: %w", err)
	}
	return nil
}

// Totals returns what every user and every role pool has spent.
func (l *Ledger) Totals(ctx context.Context) (users, roles map[string]Spent, err error) {
	users, roles = map[string]Spent{}, map[string]Spent{}
	err = l.db.View(func(txn *badger.Txn) error {
		if err := scanJSON(ctx, txn, []byte(tagUser), func(name string, s *Spent) { users[name] = *s }); err != nil {
			return err
		}
		return scanJSON(ctx, txn, []byte(tagPool), func(name string, s *Spent) { roles[name] = *s })
	})
	if err != nil {
		return nil, nil, fmt.Errorf("ledger: read the totals: %w", err)
	}
	return users, roles, nil
}
