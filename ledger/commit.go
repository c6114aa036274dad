package ledger

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Group commit.
//
// Every charge must be fsynced before it is acknowledged. Badger queues the
// commits of concurrent transactions into one write, but (as of v4.9.6,
// DB.writeRequests → DB.writeToLSM) it still syncs its write-ahead log once per
// transaction, so N concurrent charges cost N syncs. The ledger therefore
// commits in groups itself: one goroutine takes every change waiting in the
// queue and applies them, one after the other, inside ONE Badger transaction,
// which is then synced once. While that sync runs the next group gathers, so
// the group grows with the load and a lone charge waits for nobody.
//
// Within the group each change still reads, checks and writes exactly as if it
// were alone: a transaction reads its own pending writes, so a charge sees the
// totals left by the charge before it in the same group. A change that is
// refused (over budget, already refunded) writes nothing. Because one goroutine
// runs every ledger transaction, two charges never race for the same totals.

// op is one change to the ledger, applied inside a group transaction. apply
// returns a refusal — an error that leaves the transaction untouched, such as
// a *BudgetError — or a failure, which aborts the whole transaction.
type op struct {
	ctx   context.Context
	apply func(txn *badger.Txn) (refusal, failure error)
	done  chan error // buffered; receives the op's outcome once committed
}

// maxGroup bounds a group so that its transaction stays far below Badger's
// batch limits for ordinary statements; a group that is still too big is split.
const maxGroup = 256

// submit queues apply for the next group commit and waits until it is on disk
// (or refused, or failed). Once queued, an op is always answered: submit then
// waits even if ctx ends, because the charge may already be committed.
func (l *Ledger) submit(ctx context.Context, apply func(*badger.Txn) (error, error)) error {
	o := &op{ctx: ctx, apply: apply, done: make(chan error, 1)}
	select {
	case l.queue <- o:
	case <-ctx.Done():
		return ctx.Err()
	case <-l.quit:
		return ErrClosed
	}
	return <-o.done
}

// commitLoop is the one goroutine that runs ledger transactions.
func (l *Ledger) commitLoop() {
	defer close(l.stopped)
	for {
		var first *op
		select {
		case first = <-l.queue:
		case <-l.quit:
			return
		}
		group := []*op{first}
	gather:
		for len(group) < maxGroup {
			select {
			case o := <-l.queue:
				group = append(group, o)
			default:
				break gather
			}
		}
		l.commit(group)
	}
}

// commit applies a group in one transaction and answers each op. If the
// transaction fails as a whole, the group is split in halves and each retried,
// so that one op that cannot be written (a statement too large for Badger, an
// undecodable record) fails alone rather than taking its group with it.
func (l *Ledger) commit(group []*op) {
	outcomes := make([]error, len(group))
	err := l.update(context.Background(), func(txn *badger.Txn) error {
		for i, o := range group {
			if err := o.ctx.Err(); err != nil {
				outcomes[i] = err
				continue
			}
			refusal, failure := o.apply(txn)
			if failure != nil {
				return failure
			}
			outcomes[i] = refusal
		}
		return nil
	})
	if err != nil && len(group) > 1 {
		l.log.Debug("group commit failed, retrying it in halves", "size", len(group), "err", err)
		l.commit(group[:len(group)/2])
		l.commit(group[len(group)/2:])
		return
	}
	for i, o := range group {
		if err != nil {
			o.done <- err
		} else {
			o.done <- outcomes[i]
		}
	}
}

// maxAttempts bounds the retries of a transaction that conflicts with another.
// Ledger transactions all run on commitLoop, so a conflict would come from a
// store transaction touching ledger keys, which none does: hitting the bound
// means something is wrong rather than busy.
const maxAttempts = 16

// update runs fn in a read-write transaction, retrying it with jittered
// exponential backoff when Badger reports a conflict with a concurrent commit.
func (l *Ledger) update(ctx context.Context, fn func(*badger.Txn) error) error {
	backoff := 50 * time.Microsecond
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := l.db.Update(fn)
		if !errors.Is(err, badger.ErrConflict) {
			return err
		}
		if attempt == maxAttempts {
			return fmt.Errorf("gave up after %d conflicting attempts: %w", attempt, err)
		}
		l.log.Debug("ledger transaction conflicted, retrying", "attempt", attempt)
		t := time.NewTimer(jitter(backoff))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		backoff = min(2*backoff, 10*time.Millisecond)
	}
}

// jitter returns a duration uniform in [d/2, 3d/2), so that transactions that
// conflicted together do not retry together. (crypto/rand: this package keeps
// math/rand out entirely; the bias of the modulo does not matter here.)
func jitter(d time.Duration) time.Duration {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return d/2 + time.Duration(binary.LittleEndian.Uint64(b[:])%uint64(d))
}
