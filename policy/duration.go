package policy

import (
	"fmt"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// UnmarshalYAML reads a duration written as Go writes them ("30s", "5m",
// "1h30m"). A bare number other than 0 is refused: "60" could mean seconds
// or nanoseconds, and a wrong guess is a timeout off by 10⁹.
func (d *Duration) UnmarshalYAML(n ast.Node) error {
	line, column := 0, 0
	if tok := n.GetToken(); tok != nil {
		line, column = tok.Position.Line, tok.Position.Column
	}
	switch n := n.(type) {
	case *ast.NullNode:
		d.Duration = 0
		return nil
	case *ast.StringNode:
		v, err := time.ParseDuration(n.Value)
		if err != nil {
			return &lineError{Line: line, column: column, Msg: fmt.Sprintf("%q is not a duration such as \"30s\" or \"5m\"", n.Value), Err: err}
		}
		d.Duration = v
		return nil
	case *ast.IntegerNode:
		if n.GetToken().Value == "0" {
			d.Duration = 0
			return nil
		}
	}
	return &lineError{Line: line, column: column, Msg: fmt.Sprintf("%s is not a duration: write it with a unit, such as \"30s\" or \"5m\"", n.String())}
}

// MarshalYAML writes the duration the way UnmarshalYAML reads it.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }
