package etcdledger

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dpproxy/dpproxy/ledger"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Charge records c as ledger.Store says. The transaction reads the user's and
// the pool's totals and the budgets set in SQL for the role and the user,
// decides with ledger.Decide, and commits only if none of those four keys
// changed meanwhile (mod revision compare; a key that did not exist must
// still not exist). Otherwise it reads again and decides again.
func (l *Ledger) Charge(ctx context.Context, c ledger.Charge, base ledger.Limits) (ledger.Receipt, error) {
	if err := ledger.ValidateCharge(c); err != nil {
		return ledger.Receipt{}, fmt.Errorf("etcdledger: charge for user %s refused: %w", c.User, err)
	}
	id, at, err := newID()
	if err != nil {
		return ledger.Receipt{}, fmt.Errorf("etcdledger: charge for user %s: %w", c.User, err)
	}
	userKey, poolKey := l.keyUser(c.User), l.keyPool(c.Role)
	roleKey, ubKey := l.keyRoleBudget(c.Role), l.keyUserBudget(c.User)
	keys := []string{userKey, ubKey}
	if c.Role != "" {
		keys = append(keys, poolKey, roleKey)
	}
	err = l.retry(ctx, func() (bool, error) {
		r, err := l.read(ctx, keys...)
		if err != nil {
			return false, err
		}
		var rb *ledger.RoleBudget
		var ub *ledger.UserBudget
		if c.Role != "" {
			if rb, err = decodeOpt[ledger.RoleBudget](r, roleKey); err != nil {
				return false, err
			}
		}
		if ub, err = decodeOpt[ledger.UserBudget](r, ubKey); err != nil {
			return false, err
		}
		lim := ledger.ResolveLimits(base, rb, ub)
		if err := ledger.ValidateLimits(lim, c); err != nil {
			return true, err
		}
		var user, pool ledger.Spent
		if err := r.decode(userKey, &user); err != nil {
			return false, err
		}
		if lim.Pool != nil {
			if err := r.decode(poolKey, &pool); err != nil {
				return false, err
			}
		}
		d, refused := ledger.Decide(c, lim, user, pool)
		if refused != nil {
			return true, refused
		}
		rec := ledger.Record{Kind: ledger.KindCharge, Charge: c, Outcome: ledger.OutcomeCharged, Pooled: d.Pooled,
			Booked: d.Booked, PoolBooked: d.PoolBooked}
		ops, err := l.entryOps(id, rec)
		if err != nil {
			return false, err
		}
		put, err := putJSON(userKey, d.User)
		if err != nil {
			return false, err
		}
		ops = append(ops, put)
		if d.Pooled {
			if put, err = putJSON(poolKey, d.Pool); err != nil {
				return false, err
			}
			ops = append(ops, put)
		}
		return l.commit(ctx, r, ops)
	})
	if errors.Is(err, ledger.ErrBudgetExceeded) {
		return ledger.Receipt{}, err
	}
	if err != nil {
		return ledger.Receipt{}, fmt.Errorf("etcdledger: charge ε=%g δ=%g for user %s: %w", c.Epsilon, c.Delta, c.User, err)
	}
	return ledger.Receipt{ID: id, Time: at}, nil
}

// Refund credits back a charge, as ledger.Store says.
func (l *Ledger) Refund(ctx context.Context, id string) error {
	if idTime(id).IsZero() {
		return fmt.Errorf("etcdledger: refund: %q is not a ledger entry ID", id)
	}
	refundID, _, err := newID()
	if err != nil {
		return fmt.Errorf("etcdledger: refund of charge %s: %w", id, err)
	}
	entryKey := l.keyEntry(id)
	err = l.retry(ctx, func() (bool, error) {
		first, err := l.read(ctx, entryKey)
		if err != nil {
			return false, err
		}
		var rec ledger.Record
		found := first[entryKey].rev != 0
		if found {
			if err := first.decode(entryKey, &rec); err != nil {
				return false, err
			}
		}
		if refusal := ledger.CheckRefundable(rec, found); refusal != nil {
			return true, refusal
		}
		c := rec.Charge
		userKey, poolKey := l.keyUser(c.User), l.keyPool(c.Role)
		r, err := l.read(ctx, entryKey, userKey, poolKey)
		if err != nil {
			return false, err
		}
		if r[entryKey].rev != first[entryKey].rev {
			return false, nil // changed between the reads
		}
		var ops []clientv3.Op
		var user ledger.Spent
		if err := r.decode(userKey, &user); err != nil {
			return false, err
		}
		if user.Epoch == "" || id > user.Epoch {
			put, err := putJSON(userKey, ledger.Release(user, c, rec.Booked))
			if err != nil {
				return false, err
			}
			ops = append(ops, put)
		}
		if rec.Pooled {
			var pool ledger.Spent
			if err := r.decode(poolKey, &pool); err != nil {
				return false, err
			}
			put, err := putJSON(poolKey, ledger.Release(pool, c, rec.PoolBooked))
			if err != nil {
				return false, err
			}
			ops = append(ops, put)
		}
		refund := ledger.Record{Kind: ledger.KindRefund, Charge: c, Outcome: ledger.OutcomeRefunded, Pooled: rec.Pooled,
			Ref: id, Booked: rec.Booked, PoolBooked: rec.PoolBooked}
		more, err := l.entryOps(refundID, refund)
		if err != nil {
			return false, err
		}
		rec.Outcome, rec.Ref = ledger.OutcomeRefunded, refundID
		put, err := putJSON(entryKey, rec)
		if err != nil {
			return false, err
		}
		ops = append(append(ops, more...), put)
		return l.commit(ctx, r, ops)
	})
	if err != nil {
		return fmt.Errorf("etcdledger: refund of charge %s: %w", id, err)
	}
	return nil
}

// reads are the values and mod revisions of keys read in one transaction;
// rev 0 means the key did not exist.
type reads map[string]struct {
	raw []byte
	rev int64
}

func (r reads) decode(key string, v any) error {
	e := r[key]
	if e.rev == 0 {
		return nil
	}
	if err := json.Unmarshal(e.raw, v); err != nil {
		return fmt.Errorf("decode %s: %w", key, err)
	}
	return nil
}

func decodeOpt[T any](r reads, key string) (*T, error) {
	if r[key].rev == 0 {
		return nil, nil
	}
	var v T
	if err := r.decode(key, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// read gets keys at one revision.
func (l *Ledger) read(ctx context.Context, keys ...string) (reads, error) {
	ops := make([]clientv3.Op, len(keys))
	for i, k := range keys {
		ops[i] = clientv3.OpGet(k)
	}
	resp, err := l.cli.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return nil, err
	}
	out := make(reads, len(keys))
	for i, k := range keys {
		e := out[k]
		if kvs := resp.Responses[i].GetResponseRange().Kvs; len(kvs) == 1 {
			e.raw, e.rev = kvs[0].Value, kvs[0].ModRevision
		}
		out[k] = e
	}
	return out, nil
}

// commit applies ops if no key in r changed since it was read. It reports
// false, and no error, on a conflict.
func (l *Ledger) commit(ctx context.Context, r reads, ops []clientv3.Op) (bool, error) {
	cmps := make([]clientv3.Cmp, 0, len(r))
	for k, e := range r {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", e.rev))
	}
	resp, err := l.cli.Txn(ctx).If(cmps...).Then(ops...).Commit()
	if err != nil {
		return false, err
	}
	return resp.Succeeded, nil
}

// entryOps writes an audit entry and, if it names a user, its index key.
func (l *Ledger) entryOps(id string, rec ledger.Record) ([]clientv3.Op, error) {
	raw, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("encode entry %s: %w", id, err)
	}
	ops := []clientv3.Op{clientv3.OpPut(l.keyEntry(id), string(raw))}
	if rec.Charge.User != "" {
		ops = append(ops, clientv3.OpPut(l.prefixIndex(rec.Charge.User)+id, ""))
	}
	return ops, nil
}

func putJSON(key string, v any) (clientv3.Op, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return clientv3.Op{}, fmt.Errorf("encode %s: %w", key, err)
	}
	return clientv3.OpPut(key, string(raw)), nil
}

// retry runs attempt until it reports done (with its outcome) or fails,
// backing off with jitter after each conflict so that proxies that collided
// do not collide again.
func (l *Ledger) retry(ctx context.Context, attempt func() (done bool, err error)) error {
	backoff := 200 * time.Microsecond
	for n := 1; ; n++ {
		done, err := attempt()
		if done || err != nil {
			return err
		}
		if n%100 == 0 {
			l.log.Warn("ledger transaction keeps conflicting", "attempts", n)
		}
		t := time.NewTimer(jitter(backoff))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		backoff = min(2*backoff, 20*time.Millisecond)
	}
}

// jitter returns a duration uniform in [d/2, 3d/2) (crypto/rand; the modulo
// bias does not matter here).
func jitter(d time.Duration) time.Duration {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return d/2 + time.Duration(binary.LittleEndian.Uint64(b[:])%uint64(d))
}
