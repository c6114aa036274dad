package proxy

import "github.com/dpproxy/dpproxy/parser"

// show answers SHOW and DESCRIBE from the catalog, which never holds row
// data or statistics.
func (s *Session) show(st *parser.Show) (*Result, error) {
	cols, rows, err := s.engine.cat().Show(st, s.sessionInfo())
	if err != nil {
		return nil, err
	}
	return tableResult(cols, rows), nil
}
