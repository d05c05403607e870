// Package calls: calling a role function from a foreign goroutine, through
// an interface, a function value, or a drain; closures started in a loop.
package calls

import "github.com/confinelint/confinelint/confine"

type Applier interface{ Apply(int) }

type Book struct {
	owner confine.Owner
	total int //confined:control
}

//confined:entry
func (b *Book) run(in chan int) {
	b.owner.Bind()
	for n := range in {
		b.apply(n)
	}
}

//confined:control
func (b *Book) apply(n int) { b.total += n }

// Apply adds n on the control goroutine.
//
//confined:control
func (b *Book) Apply(n int) {
	b.owner.Assert()
	b.apply(n)
}

//confined:drain
func (b *Book) drain(done chan int) {
	for {
		select {
		case n := <-done:
			b.total += n
		default:
			return
		}
	}
}

func viaInterface(a Applier) {
	a.Apply(1) // want `Book.Apply is confined to control but called on the goroutine started by the go statement: viaInterface -> Book.Apply`
}

func each(xs []int, f func(int)) {
	for _, x := range xs {
		f(x)
	}
}

func (b *Book) start(done chan int) {
	go viaInterface(b)
	go func() {
		b.drain(done) // want `Book.drain is confined to control but called on the goroutine started by the go statement`
	}()
	go func() {
		each([]int{1, 2}, b.apply) // want `Book.apply is confined to control but called on the goroutine started by the go statement`
	}()
	go each([]int{3}, b.apply) // want `Book.apply is confined to control but called on the goroutine started by the go statement: each -> Book.apply`
	for i := range 3 {
		go func() {
			b.total += i // want `b.total is confined to control but written on the goroutine started by the go statement: Book.start.func3 -> b.total`
		}()
	}
}

// The fixed variant hands work to the control goroutine.
func (b *Book) startFixed(in chan int) {
	go func() { in <- 1 }()
}
