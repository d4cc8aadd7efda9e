package yamlwalk

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// bomb is a "billion laughs" document: 10 levels of 10 aliases each.
func bomb() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 9; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// walk visits every node under n, following aliases, charging b.
func walk(b *Budget, n *yaml.Node) (int, error) {
	d, ok := Deref(n)
	if !ok {
		return 0, nil
	}
	if err := b.Spend(d); err != nil {
		return 0, err
	}
	total := 1
	for _, c := range d.Content {
		k, err := walk(b, c)
		total += k
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func TestBudgetStopsABomb(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(bomb()), &doc); err != nil {
		t.Fatal(err)
	}
	b := New(1000)
	n, err := walk(b, &doc)
	if err == nil || !strings.Contains(err.Error(), "YAML document expands to more than 1000 nodes") || !strings.HasPrefix(err.Error(), "line ") {
		t.Fatalf("walk of a bomb: %d nodes, %v; want the budget's error", n, err)
	}
	if n > 1000 {
		t.Errorf("%d nodes visited; the budget is 1000", n)
	}
	// The budget is the document's: a second walk gets nothing more.
	if err := b.Spend(&doc); err == nil {
		t.Error("a spent budget let a node through")
	}
}

func TestBudgetEnough(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("a: &x [1, 2]\nb: *x\n"), &doc); err != nil {
		t.Fatal(err)
	}
	// document, map, a, [1 2] + 2, b, alias → [1 2] + 2: 10 visits.
	b := New(10)
	if n, err := walk(b, &doc); err != nil || n != 10 {
		t.Errorf("walk: %d nodes, %v; want 10, nil", n, err)
	}
	if err := b.Spend(&doc); err == nil {
		t.Error("the 11th node went through a budget of 10")
	}
}

func TestDeref(t *testing.T) {
	target := &yaml.Node{Kind: yaml.ScalarNode, Value: "v"}
	alias := &yaml.Node{Kind: yaml.AliasNode, Alias: target}
	if d, ok := Deref(alias); !ok || d != target {
		t.Errorf("Deref(alias) = %v, %v", d, ok)
	}
	if d, ok := Deref(target); !ok || d != target {
		t.Errorf("Deref(scalar) = %v, %v", d, ok)
	}
	dangling := &yaml.Node{Kind: yaml.AliasNode}
	if d, ok := Deref(dangling); ok || d != dangling {
		t.Errorf("Deref(dangling) = %v, %v", d, ok)
	}
	loop := &yaml.Node{Kind: yaml.AliasNode}
	loop.Alias = loop
	if d, ok := Deref(loop); ok || d != loop {
		t.Errorf("Deref(loop) = %v, %v", d, ok)
	}
}
