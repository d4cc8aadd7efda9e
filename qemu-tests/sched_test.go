//go:build qemu

package qemutests

import (
	"flag"
	"strings"
	"sync"
	"testing"
	"time"
)

// The suite's own scheduler. go test runs -parallel tests at a time but
// admits the waiting ones in whatever order the Go runtime wakes them, and
// a parallel test's parallel subtests only after every top-level test has
// started: a 10-minute test could start last and run alone at the end.
// So TestMain lifts go test's limit and the tests take a slot here
// instead, -parallel slots (GOMAXPROCS unless given: 2 VMs under TCG on
// this 2-core machine), the longest expected first.

var sched = &scheduler{holders: map[string]func(){}}

// parallel is t.Parallel for the QEMU tests: the test then waits for one
// of the suite's slots, and keeps it until it ends. est is how long it
// takes under TCG when it is among the longest (the slots go to the
// longest first); the others give none and run in the order they came.
// A test whose subtests call parallel gives its slot up when the first of
// them does: what is left of it is starting them.
func parallel(t *testing.T, est ...time.Duration) {
	t.Helper()
	t.Parallel()
	var d time.Duration
	if len(est) > 0 {
		d = est[0]
	}
	release := sched.acquire(t.Name(), d)
	t.Cleanup(release)
}

// configureSched takes go test's -parallel as the number of slots and
// raises go test's own limit so that it never holds a test back itself.
// Called by TestMain once the flags are parsed.
func configureSched() {
	n := 2
	if f := flag.Lookup("test.parallel"); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			if v, ok := g.Get().(int); ok && v > 0 {
				n = v
			}
		}
		flag.Set("test.parallel", "1000")
	}
	sched.free = n
}

type scheduler struct {
	mu      sync.Mutex
	free    int
	open    bool // grants begin once the first wave of tests has come
	seq     int
	waiting []*waiter
	holders map[string]func()
}

type waiter struct {
	name    string
	est     time.Duration
	seq     int
	ready   chan struct{}
	release func()
}

// admitAfter is how long the scheduler waits after the first test comes
// before it grants a slot: every top-level parallel test comes within
// milliseconds of the first, once the sequential tests are over.
const admitAfter = 300 * time.Millisecond

func (s *scheduler) acquire(name string, est time.Duration) func() {
	s.mu.Lock()
	if i := strings.LastIndex(name, "/"); i > 0 {
		if r, ok := s.holders[name[:i]]; ok {
			s.mu.Unlock()
			r()
			s.mu.Lock()
		}
	}
	if !s.open && s.seq == 0 {
		time.AfterFunc(admitAfter, func() {
			s.mu.Lock()
			s.open = true
			s.dispatch()
			s.mu.Unlock()
		})
	}
	s.seq++
	w := &waiter{name: name, est: est, seq: s.seq, ready: make(chan struct{})}
	s.waiting = append(s.waiting, w)
	s.dispatch()
	s.mu.Unlock()
	<-w.ready
	return w.release
}

// releaser gives name's slot back, once however often it is called.
// s.mu is not held when it is called.
func (s *scheduler) releaser(name string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			delete(s.holders, name)
			s.free++
			s.dispatch()
			s.mu.Unlock()
		})
	}
}

// dispatch grants free slots to the waiting tests, the longest expected
// first, then in the order they came. s.mu is held.
func (s *scheduler) dispatch() {
	for s.open && s.free > 0 && len(s.waiting) > 0 {
		best := 0
		for i, w := range s.waiting {
			b := s.waiting[best]
			if w.est > b.est || w.est == b.est && w.seq < b.seq {
				best = i
			}
		}
		w := s.waiting[best]
		s.waiting = append(s.waiting[:best], s.waiting[best+1:]...)
		s.free--
		w.release = s.releaser(w.name)
		s.holders[w.name] = w.release
		close(w.ready)
	}
}

// TestScheduler: slots go to the longest expected test first, then in
// the order tests came; a parent's slot passes to its first subtest.
func TestScheduler(t *testing.T) {
	s := &scheduler{free: 1, holders: map[string]func(){}}
	var mu sync.Mutex
	var order []string
	held := make(chan func(), 8)
	start := func(name string, est time.Duration) {
		go func() {
			r := s.acquire(name, est)
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			held <- r
		}()
	}
	start("P", 0)
	(<-held)() // P waited for the first wave, then ran, and ends
	start("A", 0)
	r := <-held // A holds the one slot
	for _, w := range []struct {
		name string
		est  time.Duration
	}{{"B", 0}, {"C", 5 * time.Minute}, {"D", time.Minute}, {"E", 5 * time.Minute}} {
		start(w.name, w.est)
		time.Sleep(20 * time.Millisecond) // they come in this order
	}
	for range 4 {
		r()
		r = <-held
	}
	r() // B's: C and E (5 min) ran in the order they came, D (1 min), B
	start("Q", 0)
	rq := <-held
	start("Q/sub", 0) // Q's subtest takes Q's slot over: no deadlock on one slot
	(<-held)()
	rq() // Q's cleanup, after its subtests: its slot is not freed twice
	if s.free != 1 || len(s.holders) != 0 {
		t.Errorf("%d slots free, holders %v: want 1, none", s.free, s.holders)
	}
	mu.Lock()
	defer mu.Unlock()
	if got, want := strings.Join(order, " "), "P A C E D B Q Q/sub"; got != want {
		t.Errorf("slots granted in the order %q, want %q", got, want)
	}
}
