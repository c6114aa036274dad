package ledger

import (
	"context"
	"fmt"
	"sync"
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

// TestKVCreate: Create writes only an absent key, and of many concurrent
// Creates of one key exactly one wins (the model names of TRAIN).
func TestKVCreate(t *testing.T) {
	ctx := context.Background()
	l, err := Open("", Options{InMemory: true, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if ok, err := l.Create(ctx, "models", "m", []byte("first")); !ok || err != nil {
		t.Fatalf("Create of an absent key = %v, %v", ok, err)
	}
	if ok, err := l.Create(ctx, "models", "m", []byte("second")); ok || err != nil {
		t.Fatalf("Create of an existing key = %v, %v", ok, err)
	}
	if v, _, _ := l.Get(ctx, "models", "m"); string(v) != "first" {
		t.Errorf("Create replaced the value: %q", v)
	}
	if _, err := l.Create(ctx, "", "m", nil); err == nil {
		t.Error("Create with an empty namespace succeeded")
	}
	const n = 16
	wins := make(chan string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := fmt.Sprint("racer ", i)
			ok, err := l.Create(ctx, "models", "race", []byte(v))
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins <- v
			}
		}()
	}
	wg.Wait()
	close(wins)
	var won []string
	for v := range wins {
		won = append(won, v)
	}
	if v, _, _ := l.Get(ctx, "models", "race"); len(won) != 1 || string(v) != won[0] {
		t.Errorf("%d concurrent Creates: winners %q, stored %q; want exactly one, stored", n, won, v)
	}
}
