package core

import (
	"regexp"
	"sync"
)

// LazyRE is a regular expression compiled on first use. A package-level
// lazyRE{expr: `...`} is static data: it costs nothing at package
// initialisation, where a regexp.MustCompile (2 KB and more) or even a
// sync.OnceValue (a closure and its state) allocates in every process
// (issue 18).
type LazyRE struct {
	Expr string
	once sync.Once
	re   *regexp.Regexp
}

// Get returns the compiled expression, compiling it the first time.
func (l *LazyRE) Get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.Expr) })
	return l.re
}
