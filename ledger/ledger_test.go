package ledger

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

func TestReopenKeepsTotalsAndEntries(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "ledger")
	l, err := Open(dir, Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	pool := Budget{Epsilon: 100, Delta: 1}
	lim := Limits{User: Budget{Epsilon: 10, Delta: 1e-5}, Pool: &pool}
	r1, err := l.Charge(ctx, Charge{User: "alice", Role: "analyst", Epsilon: 1, Delta: 1e-6, Rho: 0.5}, lim)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := l.Charge(ctx, Charge{User: "alice", Role: "analyst", Epsilon: 2}, lim)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Refund(ctx, r2.ID); err != nil {
		t.Fatal(err)
	}
	if err := l.Put(ctx, "models", "m1", []byte("weights")); err != nil {
		t.Fatal(err)
	}
	wantSpent := mustSpent(t, l, "alice")
	wantTrail := mustEntries(t, l, "", 0)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	l, err = Open(dir, Options{Logger: quietLogger()})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer l.Close()
	if got := mustSpent(t, l, "alice"); got != wantSpent || got.Epsilon != 1 || got.Rho != 0.5 {
		t.Errorf("after reopen alice spent %+v, want %+v", got, wantSpent)
	}
	got0, _ := l.RoleSpent(ctx, "analyst")
	sameSums(t, "the pool after reopen", got0, Spent{Epsilon: 1, Delta: 1e-6, Rho: 0.5, Charges: 1})
	got := mustEntries(t, l, "", 0)
	if len(got) != len(wantTrail) {
		t.Fatalf("after reopen the trail has %d entries, want %d", len(got), len(wantTrail))
	}
	for i := range got {
		if got[i] != wantTrail[i] {
			t.Errorf("entry %d after reopen: %+v, want %+v", i, got[i], wantTrail[i])
		}
	}
	if err := l.Refund(ctx, r2.ID); !errors.Is(err, ErrAlreadyRefunded) {
		t.Errorf("refund after reopen of a charge refunded before: %v", err)
	}
	if v, ok, err := l.Get(ctx, "models", "m1"); err != nil || !ok || string(v) != "weights" {
		t.Errorf("Get after reopen = %q, %v, %v", v, ok, err)
	}
	// New IDs continue after the old ones, whatever the clock says.
	l.lastNanos.Store(0)
	if err := l.seedIDs(); err != nil {
		t.Fatal(err)
	}
	r3, err := l.Charge(ctx, Charge{User: "alice", Role: "analyst", Epsilon: 1}, lim)
	if err != nil {
		t.Fatal(err)
	}
	if r3.ID <= wantTrail[0].ID || r3.ID <= r1.ID {
		t.Errorf("ID %s after reopen does not sort after %s", r3.ID, wantTrail[0].ID)
	}
}

// snapshot records every file under dir with its contents.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameFiles(t *testing.T, before, after map[string]string) {
	t.Helper()
	for p, b := range before {
		if a, ok := after[p]; !ok {
			t.Errorf("Open deleted %s", p)
		} else if a != b {
			t.Errorf("Open changed %s", p)
		}
	}
}

func TestOpenRefusesWhatIsNotALedger(t *testing.T) {
	t.Run("garbage files", func(t *testing.T) {
		dir := t.TempDir()
		for name, body := range map[string]string{"notes.txt": "hello", "000001.sst": "not a table", "000001.vlog": "junk"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		before := snapshot(t, dir)
		_, err := Open(dir, Options{Logger: quietLogger()})
		if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "no ledger") {
			t.Fatalf("Open of a directory of garbage returned %v, want an error naming %s", err, dir)
		}
		sameFiles(t, before, snapshot(t, dir))
	})

	t.Run("a file", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "ledger")
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(p, Options{Logger: quietLogger()}); err == nil || !strings.Contains(err.Error(), p) {
			t.Fatalf("Open of a regular file returned %v", err)
		}
	})

	t.Run("a Badger store that is not a ledger", func(t *testing.T) {
		dir := t.TempDir()
		db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(func(txn *badger.Txn) error { return txn.Set([]byte("k"), []byte("v")) }); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		_, err = Open(dir, Options{Logger: quietLogger()})
		if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "not a dpproxy ledger") {
			t.Fatalf("Open of a foreign Badger store returned %v", err)
		}
		db, err = badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
		if err != nil {
			t.Fatalf("the foreign store no longer opens: %v", err)
		}
		defer db.Close()
		if err := db.View(func(txn *badger.Txn) error { _, err := txn.Get([]byte("k")); return err }); err != nil {
			t.Errorf("the foreign store lost its data: %v", err)
		}
	})

	t.Run("a ledger with a corrupt manifest", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "ledger")
		l, err := Open(dir, Options{Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Charge(context.Background(), Charge{User: "u", Epsilon: 1}, Limits{User: Budget{10, 0}}); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, badger.ManifestFilename), []byte("garbage garbage garbage"), 0o600); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, dir)
		if _, err := Open(dir, Options{Logger: quietLogger()}); err == nil || !strings.Contains(err.Error(), dir) {
			t.Fatalf("Open of a ledger with a corrupt manifest returned %v", err)
		}
		sameFiles(t, before, snapshot(t, dir))
	})

	t.Run("a ledger whose manifest is lost", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "ledger")
		l, err := Open(dir, Options{Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, badger.ManifestFilename)); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, dir)
		if _, err := Open(dir, Options{Logger: quietLogger()}); err == nil || !strings.Contains(err.Error(), dir) {
			t.Fatalf("Open of a ledger without its manifest returned %v", err)
		}
		sameFiles(t, before, snapshot(t, dir))
	})

	t.Run("a ledger already open", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "ledger")
		l, err := Open(dir, Options{Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if _, err := Open(dir, Options{Logger: quietLogger()}); err == nil || !strings.Contains(err.Error(), dir) {
			t.Fatalf("second Open of a ledger in use returned %v", err)
		}
	})
}

func TestOpenCreatesAndAcceptsEmptyDir(t *testing.T) {
	for _, dir := range []string{filepath.Join(t.TempDir(), "a", "b"), t.TempDir()} {
		l, err := Open(dir, Options{Logger: quietLogger()})
		if err != nil {
			t.Fatalf("Open(%s): %v", dir, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		// The marker was written: it reopens.
		l, err = Open(dir, Options{Logger: quietLogger()})
		if err != nil {
			t.Fatalf("reopen %s: %v", dir, err)
		}
		l.Close()
	}
}

func TestBadgerLoggerLevels(t *testing.T) {
	var buf bytes.Buffer
	lg := badgerLogger{slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	lg.Infof("replaying %d entries\n", 3)
	lg.Debugf("noise")
	if buf.Len() != 0 {
		t.Errorf("Badger's info chatter reached an info-level log: %s", buf.String())
	}
	lg.Warningf("disk %s nearly full\n", "sda")
	if !strings.Contains(buf.String(), "level=WARN") || !strings.Contains(buf.String(), "badger: disk sda nearly full") {
		t.Errorf("warning not logged as one: %q", buf.String())
	}
}
