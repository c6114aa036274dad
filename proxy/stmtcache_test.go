package proxy

import (
	"testing"

	"github.com/dpproxy/dpproxy/parser"
)

func TestStmtCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := newStmtCache(2)
	a, err := c.parse("SELECT 1", parser.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.parse("SELECT 2", parser.MySQL); err != nil {
		t.Fatal(err)
	}
	if again, _ := c.parse("SELECT 1", parser.MySQL); again != a {
		t.Error("a cached statement was parsed again")
	}
	c.parse("SELECT 3", parser.MySQL) // evicts SELECT 2, the least recently used
	if _, ok := c.items[stmtKey{"SELECT 2", parser.MySQL}]; ok {
		t.Error("SELECT 2 should have been evicted")
	}
	if _, ok := c.items[stmtKey{"SELECT 1", parser.MySQL}]; !ok {
		t.Error("SELECT 1 was used last and should stay")
	}
	if _, err := c.parse("SELEC 1", parser.MySQL); err == nil {
		t.Error("a syntax error was accepted")
	}
	if len(c.items) != 2 || c.order.Len() != 2 {
		t.Errorf("cache holds %d/%d entries, want 2", len(c.items), c.order.Len())
	}
}
