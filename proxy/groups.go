package proxy

import (
	"container/heap"

	"github.com/dpproxy/dpproxy/eval"
)

// keep is the test each backend group must pass to be kept in memory: with
// partition selection, the selection itself (a DP release, decided as the
// group streams in, so rejected groups cost no memory); with public keys,
// membership of the public domain (every public group is released anyway,
// present or not; see chooseGroups).
func (r *release) keep() func(group) bool {
	if r.selector != nil {
		return func(g group) bool { return r.selector.Keep(g.units) }
	}
	public := make(map[string]bool)
	var enumerate func(prefix []any)
	enumerate = func(prefix []any) {
		if len(prefix) == len(r.plan.Keys) {
			public[groupKey(prefix)] = true
			return
		}
		for _, v := range r.plan.Keys[len(prefix)].Public {
			enumerate(append(prefix, v))
		}
	}
	enumerate(nil)
	return func(g group) bool { return public[groupKey(g.keys)] }
}

// keptGroups holds at most limit groups: past it, those with the smallest
// keys (eval.Compare, key by key). The choice depends only on the set of
// groups offered, never on the order the backend sent them in, so that it
// is a function of the DP release alone.
type keptGroups struct {
	limit int
	h     groupHeap
}

func newKeptGroups(limit int) *keptGroups { return &keptGroups{limit: max(limit, 1)} }

func (k *keptGroups) add(g group) {
	if len(k.h) < k.limit {
		heap.Push(&k.h, g)
		return
	}
	// The heap's root is the largest kept key: replace it if g is smaller.
	if compareKeys(g.keys, k.h[0].keys) < 0 {
		k.h[0] = g
		heap.Fix(&k.h, 0)
	}
}

// groups returns the kept groups, in no particular order.
func (k *keptGroups) groups() []group { return []group(k.h) }

func compareKeys(a, b []any) int {
	for i := range a {
		if c := eval.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// groupHeap is a max-heap by keys.
type groupHeap []group

func (h groupHeap) Len() int           { return len(h) }
func (h groupHeap) Less(i, j int) bool { return compareKeys(h[i].keys, h[j].keys) > 0 }
func (h groupHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *groupHeap) Push(x any)        { *h = append(*h, x.(group)) }
func (h *groupHeap) Pop() any {
	old := *h
	g := old[len(old)-1]
	*h = old[:len(old)-1]
	return g
}
