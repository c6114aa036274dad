package ledger

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Key layout. Every key starts with a one-letter tag and a slash, so that each
// kind of record is one contiguous, prefix-iterable range:
//
//	m/format                      format marker (JSON formatMarker)
//	e/<id>                        audit entry, charge or refund (JSON record)
//	i/<len><user><id>             index of a user's entries (empty value)
//	u/<user>                      running totals of a user (JSON Spent)
//	p/<role>                      running totals of a role's shared pool (JSON Spent)
//	b/r<role>                     budget of a role set in SQL (JSON RoleBudget)
//	b/u<user>                     budget of a user set in SQL (JSON UserBudget)
//	k/<len><namespace><key>       generic key-value store (raw value)
//
// <id> is the 16-byte binary entry ID (see newID); <len> is the uvarint length
// of the string that follows it, so that no user, role or namespace name can
// run into the next field, whatever bytes it contains.
const (
	tagMeta  = "m/"
	tagEntry = "e/"
	tagIndex = "i/"
	tagUser  = "u/"
	tagPool  = "p/"
	tagKV    = "k/"

	tagRoleBudget = "b/r"
	tagUserBudget = "b/u"
)

func keyFormat() []byte { return []byte(tagMeta + "format") }

func keyEntry(id entryID) []byte { return append([]byte(tagEntry), id[:]...) }

func keyUserTotals(user string) []byte { return []byte(tagUser + user) }

func keyPoolTotals(role string) []byte { return []byte(tagPool + role) }

func keyRoleBudget(role string) []byte { return []byte(tagRoleBudget + role) }

func keyUserBudget(user string) []byte { return []byte(tagUserBudget + user) }

// prefixIndex is the range of all index keys of one user.
func prefixIndex(user string) []byte { return lenPrefixed(tagIndex, user) }

func keyIndex(user string, id entryID) []byte { return append(prefixIndex(user), id[:]...) }

// prefixKV is the range of all keys of one namespace.
func prefixKV(namespace string) []byte { return lenPrefixed(tagKV, namespace) }

func keyKV(namespace, key string) []byte { return append(prefixKV(namespace), key...) }

func lenPrefixed(tag, s string) []byte {
	b := make([]byte, 0, len(tag)+binary.MaxVarintLen64+len(s)+idLen)
	b = append(b, tag...)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// idLen is the size of an entry ID: 8 bytes of big-endian Unix nanoseconds,
// then 8 random bytes. Big-endian time first makes byte order time order, so a
// reverse iterator over tagEntry walks the audit trail newest first; the random
// half keeps IDs unique should two ledgers' trails ever be merged.
const idLen = 16

type entryID [idLen]byte

// String is the ID as handed out in receipts: 32 hex digits, which sort the
// same way as the bytes.
func (id entryID) String() string { return hex.EncodeToString(id[:]) }

func (id entryID) time() time.Time {
	return time.Unix(0, int64(binary.BigEndian.Uint64(id[:8])))
}

func parseID(s string) (entryID, error) {
	var id entryID
	if hex.DecodedLen(len(s)) != idLen {
		return id, fmt.Errorf("%q is not a ledger entry ID", s)
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("%q is not a ledger entry ID", s)
	}
	return id, nil
}

// newID returns a fresh entry ID whose time is now, or one nanosecond after the
// newest ID this ledger has handed out if the clock reads earlier than that.
func (l *Ledger) newID() (entryID, error) {
	var id entryID
	now := time.Now().UnixNano()
	for {
		last := l.lastNanos.Load()
		n := max(now, last+1)
		if l.lastNanos.CompareAndSwap(last, n) {
			binary.BigEndian.PutUint64(id[:8], uint64(n))
			break
		}
	}
	if _, err := rand.Read(id[8:]); err != nil {
		return id, fmt.Errorf("draw a random entry ID: %w", err)
	}
	return id, nil
}

// seedIDs makes newID continue after the newest entry already on disk.
func (l *Ledger) seedIDs() error {
	return l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: []byte(tagEntry)})
		defer it.Close()
		it.Seek(seekLast(tagEntry))
		if it.ValidForPrefix([]byte(tagEntry)) {
			key := it.Item().Key()
			if len(key) == len(tagEntry)+idLen {
				l.lastNanos.Store(int64(binary.BigEndian.Uint64(key[len(tagEntry):])))
			}
		}
		return nil
	})
}

// seekLast returns a key just after every key of the form prefix+<id>, where
// a reverse iterator starts to walk the range newest first.
func seekLast[T ~string | ~[]byte](prefix T) []byte {
	b := append([]byte(nil), prefix...)
	for range idLen + 1 {
		b = append(b, 0xff)
	}
	return b
}
