package proxy

import (
	"container/list"
	"sync"

	"github.com/dpproxy/dpproxy/parser"
)

// stmtCache remembers parsed statements by their SQL text. Dashboards and
// drivers send the same text again and again; parsing is the largest part of
// the proxy's own work per query. Parsed statements are never modified after
// parsing, so one may be shared by all sessions.
type stmtCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // front: most recently used
	items map[stmtKey]*list.Element
}

type stmtKey struct {
	sql     string
	dialect parser.Dialect
}

type parsed struct {
	key         stmtKey
	stmt        parser.Statement
	params      int
	fingerprint string
}

// maxCachedSQL keeps huge statements out of the cache.
const maxCachedSQL = 8 << 10

func newStmtCache(max int) *stmtCache {
	return &stmtCache{max: max, order: list.New(), items: make(map[stmtKey]*list.Element, max)}
}

// parse returns the statement for sql, parsing it on a miss. Errors are not
// cached: a bad statement costs a parse each time, as it should.
func (c *stmtCache) parse(sql string, d parser.Dialect) (*parsed, error) {
	key := stmtKey{sql, d}
	c.mu.Lock()
	if el, ok := c.items[key]; ok {
		c.order.MoveToFront(el)
		p := el.Value.(*parsed)
		c.mu.Unlock()
		return p, nil
	}
	c.mu.Unlock()
	stmt, n, err := parser.Parse(sql, d)
	if err != nil {
		return nil, err
	}
	p := &parsed{key: key, stmt: stmt, params: n}
	if _, isSelect := stmt.(*parser.Select); isSelect {
		p.fingerprint = parser.Fingerprint(sql, d)
	}
	if len(sql) > maxCachedSQL {
		return p, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		return el.Value.(*parsed), nil
	}
	c.items[key] = c.order.PushFront(p)
	if c.order.Len() > c.max {
		old := c.order.Remove(c.order.Back()).(*parsed)
		delete(c.items, old.key)
	}
	return p, nil
}
