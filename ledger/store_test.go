package ledger

import (
	"context"
	"testing"
)

func TestKV(t *testing.T) {
	ctx := context.Background()
	l, err := Open("", Options{InMemory: true, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	if _, ok, err := l.Get(ctx, "cache", "q1"); ok || err != nil {
		t.Fatalf("Get of a missing key = %v, %v", ok, err)
	}
	if err := l.Put(ctx, "cache", "q1", []byte("answer 1")); err != nil {
		t.Fatal(err)
	}
	if err := l.Put(ctx, "cache", "q2", []byte("answer 2")); err != nil {
		t.Fatal(err)
	}
	// Namespaces must not bleed into each other, even when their names and
	// keys concatenate to the same bytes.
	if err := l.Put(ctx, "cach", "eq1", []byte("other")); err != nil {
		t.Fatal(err)
	}
	if err := l.Put(ctx, "cache", "q1", []byte("answer 1b")); err != nil {
		t.Fatal(err)
	}
	v, ok, err := l.Get(ctx, "cache", "q1")
	if err != nil || !ok || string(v) != "answer 1b" {
		t.Errorf("Get = %q, %v, %v; want the replaced value", v, ok, err)
	}
	m, err := l.List(ctx, "cache")
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || string(m["q1"]) != "answer 1b" || string(m["q2"]) != "answer 2" {
		t.Errorf("List(cache) = %q", m)
	}
	if err := l.Delete(ctx, "cache", "q1"); err != nil {
		t.Fatal(err)
	}
	if err := l.Delete(ctx, "cache", "q1"); err != nil {
		t.Errorf("deleting a missing key: %v", err)
	}
	if _, ok, _ := l.Get(ctx, "cache", "q1"); ok {
		t.Error("deleted key still there")
	}
	if m, _ := l.List(ctx, "cach"); len(m) != 1 || string(m["eq1"]) != "other" {
		t.Errorf("List(cach) = %q", m)
	}
	if m, _ := l.List(ctx, "nothing"); len(m) != 0 {
		t.Errorf("List of an empty namespace = %q", m)
	}
	if err := l.Put(ctx, "", "k", nil); err == nil {
		t.Error("Put with an empty namespace succeeded")
	}
	// The KV store must not show up in the ledger's trail.
	if es, _ := l.Entries(ctx, "", 0); len(es) != 0 {
		t.Errorf("KV writes appear in the audit trail: %+v", es)
	}
}
