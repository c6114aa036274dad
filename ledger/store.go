package ledger

import (
	"context"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// Put stores value under key in namespace, durably, replacing any value there.
// The store is for the small state other parts of dpproxy must keep beside the
// ledger (cached answers, trained models, budgets set in SQL), so that one
// directory holds everything a restart needs.
func (l *Ledger) Put(ctx context.Context, namespace, key string, value []byte) error {
	if err := checkKV(ctx, namespace, key); err != nil {
		return fmt.Errorf("ledger: put %s/%s: %w", namespace, key, err)
	}
	err := l.update(ctx, func(txn *badger.Txn) error {
		return txn.Set(keyKV(namespace, key), value)
	})
	if err != nil {
		return fmt.Errorf("ledger: put %s/%s: %w", namespace, key, err)
	}
	return nil
}

// Create stores value under key in namespace only if no value is there, in
// one transaction: of two concurrent Creates of one key exactly one returns
// true (Badger's serializable snapshot isolation makes the loser's
// transaction conflict; update retries it, and the retry sees the key). It
// returns false, and writes nothing, when the key exists.
func (l *Ledger) Create(ctx context.Context, namespace, key string, value []byte) (bool, error) {
	if err := checkKV(ctx, namespace, key); err != nil {
		return false, fmt.Errorf("ledger: create %s/%s: %w", namespace, key, err)
	}
	var created bool
	err := l.update(ctx, func(txn *badger.Txn) error {
		created = false
		_, err := txn.Get(keyKV(namespace, key))
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, badger.ErrKeyNotFound):
			return err
		}
		created = true
		return txn.Set(keyKV(namespace, key), value)
	})
	if err != nil {
		return false, fmt.Errorf("ledger: create %s/%s: %w", namespace, key, err)
	}
	return created, nil
}

// Get returns the value under key in namespace, and false if there is none.
func (l *Ledger) Get(ctx context.Context, namespace, key string) ([]byte, bool, error) {
	if err := checkKV(ctx, namespace, key); err != nil {
		return nil, false, fmt.Errorf("ledger: get %s/%s: %w", namespace, key, err)
	}
	var value []byte
	err := l.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(keyKV(namespace, key))
		if err != nil {
			return err
		}
		value, err = item.ValueCopy(nil)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("ledger: get %s/%s: %w", namespace, key, err)
	}
	return value, true, nil
}

// List returns every key and value in namespace.
func (l *Ledger) List(ctx context.Context, namespace string) (map[string][]byte, error) {
	if err := checkNamespace(ctx, namespace); err != nil {
		return nil, fmt.Errorf("ledger: list %s: %w", namespace, err)
	}
	out := make(map[string][]byte)
	prefix := prefixKV(namespace)
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 64})
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			out[string(it.Item().Key()[len(prefix):])] = v
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ledger: list %s: %w", namespace, err)
	}
	return out, nil
}

// Delete removes key from namespace. Deleting a key that is not there is not
// an error.
func (l *Ledger) Delete(ctx context.Context, namespace, key string) error {
	if err := checkKV(ctx, namespace, key); err != nil {
		return fmt.Errorf("ledger: delete %s/%s: %w", namespace, key, err)
	}
	err := l.update(ctx, func(txn *badger.Txn) error {
		return txn.Delete(keyKV(namespace, key))
	})
	if err != nil {
		return fmt.Errorf("ledger: delete %s/%s: %w", namespace, key, err)
	}
	return nil
}

func checkKV(ctx context.Context, namespace, key string) error {
	if key == "" {
		return errors.New("the key is empty")
	}
	return checkNamespace(ctx, namespace)
}

func checkNamespace(ctx context.Context, namespace string) error {
	if namespace == "" {
		return errors.New("the namespace is empty")
	}
	return ctx.Err()
}
