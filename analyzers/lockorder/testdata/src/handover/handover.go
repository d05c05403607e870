// Package handover: locks that change goroutines on purpose.
package handover

import "sync"

type Buffer struct {
	mu    sync.Mutex
	cond  *sync.Cond
	used  int
	limit int
}

// Reserve waits for room on a goroutine that keeps the lock when it is
// done; Reserve unlocks it once told. Silent.
func (b *Buffer) Reserve(n int) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.mu.Lock()
		for b.used+n > b.limit {
			b.cond.Wait()
		}
		b.used += n
	}()
	<-done
	b.mu.Unlock()
}

// Leave starts a goroutine that keeps the lock and nobody unlocks it.
func (b *Buffer) Leave(n int) {
	// An implicit return is reported at the function (here the literal's
	// func keyword), with the closing brace as related information.
	go func() { // want `Buffer.mu taken at handover.go:\d+ is still held when the goroutine started by the go statement ends: nothing releases it, and every later Lock of it blocks \(at the implicit return, handover.go:36\)`
		b.mu.Lock()
		b.used += n
	}()
}

func (b *Buffer) Release(n int) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// PingPong: goroutines lock, this function unlocks after each signal.
// Silent.
func PingPong() {
	var mu sync.RWMutex
	rl := mu.RLocker()
	locked := make(chan bool)
	go func() {
		rl.Lock()
		rl.Lock()
		locked <- true
		mu.Lock()
		locked <- true
	}()
	<-locked
	rl.Unlock()
	rl.Unlock()
	<-locked
	mu.Unlock()
}

// Twice unlocks what it already unlocked, with no goroutine in between.
func Twice(b *Buffer) {
	b.mu.Lock()
	b.mu.Unlock()
	b.mu.Unlock() // want `Buffer.mu unlocked but not held`
}

// Gate wraps a mutex; a goroutine locks it and the starter hands Unlock,
// as a method value, to a helper that runs it. Silent.
type Gate struct {
	mu    sync.Mutex
	count int
}

func (g *Gate) Lock()   { g.mu.Lock() }
func (g *Gate) Unlock() { g.mu.Unlock() }

func run(f func()) { f() }

func Borrow(g *Gate) {
	locked := make(chan struct{})
	go func() {
		g.Lock()
		g.count++
		close(locked)
	}()
	<-locked
	run(g.Unlock)
}

func (g *Gate) Count() int {
	g.Lock()
	defer g.Unlock()
	return g.count
}
