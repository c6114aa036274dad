package etcdledger

import (
	"context"
	"errors"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Put stores value under key in namespace, as ledger.Store says. etcd limits
// a request to 1.5 MiB by default: larger values fail.
func (l *Ledger) Put(ctx context.Context, namespace, key string, value []byte) error {
	if err := checkKV(namespace, key); err != nil {
		return fmt.Errorf("etcdledger: put %s/%s: %w", namespace, key, err)
	}
	if _, err := l.cli.Put(ctx, l.prefixKV(namespace)+key, string(value)); err != nil {
		return fmt.Errorf("etcdledger: put %s/%s: %w", namespace, key, err)
	}
	return nil
}

// Create stores value under key in namespace only if the key does not exist:
// one etcd transaction comparing the key's create revision with 0 (etcd's
// "absent"), so that of concurrent Creates from any proxies of a fleet
// exactly one succeeds. It returns false, and writes nothing, if it exists.
func (l *Ledger) Create(ctx context.Context, namespace, key string, value []byte) (bool, error) {
	if err := checkKV(namespace, key); err != nil {
		return false, fmt.Errorf("etcdledger: create %s/%s: %w", namespace, key, err)
	}
	k := l.prefixKV(namespace) + key
	resp, err := l.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
		Then(clientv3.OpPut(k, string(value))).
		Commit()
	if err != nil {
		return false, fmt.Errorf("etcdledger: create %s/%s: %w", namespace, key, err)
	}
	return resp.Succeeded, nil
}

// Get returns the value under key in namespace, and false if there is none.
func (l *Ledger) Get(ctx context.Context, namespace, key string) ([]byte, bool, error) {
	if err := checkKV(namespace, key); err != nil {
		return nil, false, fmt.Errorf("etcdledger: get %s/%s: %w", namespace, key, err)
	}
	resp, err := l.cli.Get(ctx, l.prefixKV(namespace)+key)
	if err != nil {
		return nil, false, fmt.Errorf("etcdledger: get %s/%s: %w", namespace, key, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, false, nil
	}
	return resp.Kvs[0].Value, true, nil
}

// List returns every key and value in namespace.
func (l *Ledger) List(ctx context.Context, namespace string) (map[string][]byte, error) {
	if namespace == "" {
		return nil, errors.New("etcdledger: list: the namespace is empty")
	}
	prefix := l.prefixKV(namespace)
	resp, err := l.cli.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("etcdledger: list %s: %w", namespace, err)
	}
	out := make(map[string][]byte, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		out[strings.TrimPrefix(string(kv.Key), prefix)] = kv.Value
	}
	return out, nil
}

// Delete removes key from namespace; a missing key is not an error.
func (l *Ledger) Delete(ctx context.Context, namespace, key string) error {
	if err := checkKV(namespace, key); err != nil {
		return fmt.Errorf("etcdledger: delete %s/%s: %w", namespace, key, err)
	}
	if _, err := l.cli.Delete(ctx, l.prefixKV(namespace)+key); err != nil {
		return fmt.Errorf("etcdledger: delete %s/%s: %w", namespace, key, err)
	}
	return nil
}

func checkKV(namespace, key string) error {
	switch {
	case namespace == "":
		return errors.New("the namespace is empty")
	case key == "":
		return errors.New("the key is empty")
	}
	return nil
}
