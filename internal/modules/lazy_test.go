package modules

import (
	"sync"
	"testing"
)

func TestLazyRE(t *testing.T) {
	l := lazyRE{expr: `^[a-z]+$`}
	if l.re != nil {
		t.Fatal("compiled before first use")
	}
	var wg sync.WaitGroup
	got := make([]bool, 8)
	for i := range got {
		wg.Go(func() { got[i] = l.get().MatchString("abc") && !l.get().MatchString("a1") })
	}
	wg.Wait()
	for i, ok := range got {
		if !ok {
			t.Errorf("goroutine %d: wrong match", i)
		}
	}
	if first := l.get(); first != l.re || l.get() != first {
		t.Error("compiled more than once")
	}
}
