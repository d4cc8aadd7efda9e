// Package yamlwalk bounds the walks of one YAML document's node tree
// (yaml.v3's): aliases are followed, and every node a walk visits is
// charged to the document's Budget, however many aliases lead to it, so a
// "billion laughs" document stops at the budget instead of making a walk
// exponential. Every walk of a document (the schema's checks, the values
// they resolve, the decoder) charges the same Budget.
package yamlwalk

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Budget is what is left of the nodes the walks of one document may
// visit. It is not safe for concurrent use.
type Budget struct{ left, limit int }

// New is a budget of limit nodes.
func New(limit int) *Budget { return &Budget{left: limit, limit: limit} }

// Limit is the number of nodes the budget started with.
func (b *Budget) Limit() int { return b.limit }

// Spend charges one visit of n. Once the budget is spent it returns the
// error, naming n's line: "line L: YAML document expands to more than
// LIMIT nodes".
func (b *Budget) Spend(n *yaml.Node) error {
	b.left--
	if b.left < 0 {
		b.left = -1 // no wrap-around, however long a caller goes on
		return fmt.Errorf("line %d: %s", n.Line, b.Exceeded())
	}
	return nil
}

// Spent tells whether a Spend has failed: the walks went over the budget.
func (b *Budget) Spent() bool { return b.left < 0 }

// Exceeded is the message for a document over the budget, without a line.
func (b *Budget) Exceeded() string {
	return fmt.Sprintf("YAML document expands to more than %d nodes", b.limit)
}

// maxChain bounds a chain of aliases. yaml.v3 makes none (an alias names
// an anchored node, never another alias), but a tree built by hand may.
const maxChain = 100

// Deref follows n's aliases to the node they name. ok is false for an
// alias that names nothing or a chain longer than maxChain; then n is
// returned as it is.
func Deref(n *yaml.Node) (_ *yaml.Node, ok bool) {
	d := n
	for i := 0; d.Kind == yaml.AliasNode; i++ {
		if d.Alias == nil || i >= maxChain {
			return n, false
		}
		d = d.Alias
	}
	return d, true
}
