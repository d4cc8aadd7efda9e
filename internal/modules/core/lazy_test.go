package core

import (
	"sync"
	"testing"
)

func TestLazyRE(t *testing.T) {
	l := LazyRE{Expr: `^[a-z]+$`}
	if l.re != nil {
		t.Fatal("compiled before first use")
	}
	var wg sync.WaitGroup
	got := make([]bool, 8)
	for i := range got {
		wg.Go(func() { got[i] = l.Get().MatchString("abc") && !l.Get().MatchString("a1") })
	}
	wg.Wait()
	for i, ok := range got {
		if !ok {
			t.Errorf("goroutine %d: wrong match", i)
		}
	}
	if first := l.Get(); first != l.re || l.Get() != first {
		t.Error("compiled more than once")
	}
}
