package policy

import (
	"os"
	"strings"
	"testing"
)

// The policy shown in the README must be one the proxy accepts.
func TestReadmePolicyParses(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```yaml\n")
	if !ok {
		t.Fatal("README.md has no yaml block")
	}
	src, _, _ := strings.Cut(rest, "```")
	p, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("the README's policy: %v", err)
	}
	if c, ok := p.Tables["pums"].Column("seen"); !ok || c.Type != TypeDate || !c.Bounded() {
		t.Errorf("the README's date column: %+v", c)
	}
}
