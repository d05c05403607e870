// Modelled on client-go's sharedIndexInformer: DeltaFIFO.Pop holds the fifo
// lock while HandleDeltas updates the indexer and distributes notifications
// to the processorListener, whose handler funcs run in a separate goroutine.
// The handlers take a *different* mutex (the controller's own cache lock)
// and read the indexer through its own RWMutex; neither is ever held while
// taking the fifo lock, so the send under fifo.lock always completes.
package main

import (
	"fmt"
	"runtime"
	"sync"
)

type Pod struct{ Name, Phase string }

type Indexer struct {
	mu    sync.RWMutex
	items map[string]Pod
}

func (ix *Indexer) Update(p Pod) { ix.mu.Lock(); ix.items[p.Name] = p; ix.mu.Unlock() }
func (ix *Indexer) Get(name string) (Pod, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	p, ok := ix.items[name]
	return p, ok
}

type DeltaFIFO struct {
	lock  sync.Mutex
	items []Pod
}

func (f *DeltaFIFO) Add(p Pod) { f.lock.Lock(); f.items = append(f.items, p); f.lock.Unlock() }

type Informer struct {
	fifo     DeltaFIFO
	indexer  *Indexer
	handlerC chan func() // processorListener; cap from ResyncConfig
	onUpdate func(name string)
}

// popAndProcess mirrors DeltaFIFO.Pop(HandleDeltas): everything happens with
// fifo.lock held, including the send of the handler closure.
func (inf *Informer) popAndProcess() bool {
	inf.fifo.lock.Lock()
	defer inf.fifo.lock.Unlock()
	if len(inf.fifo.items) == 0 {
		return false
	}
	p := inf.fifo.items[0]
	inf.fifo.items = inf.fifo.items[1:]
	inf.indexer.Update(p) // fifo.lock -> indexer.mu, released immediately
	name := p.Name
	inf.handlerC <- func() { inf.onUpdate(name) }
	return true
}

type Controller struct {
	mu      sync.Mutex // controller-local cache lock, distinct from fifo.lock
	phases  map[string]string
	indexer *Indexer
}

func (c *Controller) OnUpdate(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.indexer.Get(name); ok { // c.mu -> indexer.mu (never the reverse)
		c.phases[name] = p.Phase
	}
}

func main() {
	ix := &Indexer{items: map[string]Pod{}}
	ctrl := &Controller{phases: map[string]string{}, indexer: ix}
	resyncQueue := 3
	inf := &Informer{indexer: ix, handlerC: make(chan func(), resyncQueue), onUpdate: ctrl.OnUpdate}

	runDone := make(chan struct{})
	go func() { // processorListener.run
		defer close(runDone)
		for fn := range inf.handlerC {
			fn()
		}
	}()

	var wg sync.WaitGroup
	for r := 0; r < 3; r++ { // reflectors
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				inf.fifo.Add(Pod{Name: fmt.Sprintf("pod-%d", i%10), Phase: fmt.Sprintf("r%d-%d", r, i)})
			}
		}(r)
	}
	processed := 0
	procDone := make(chan struct{})
	go func() { // controller.processLoop
		defer close(procDone)
		for processed < 600 {
			if inf.popAndProcess() {
				processed++
			} else {
				runtime.Gosched() // fifo empty; in client-go Pop waits on a Cond
			}
		}
	}()
	wg.Wait()
	<-procDone
	close(inf.handlerC)
	<-runDone
	ctrl.mu.Lock()
	fmt.Println("processed:", processed, "cached pods:", len(ctrl.phases))
	ctrl.mu.Unlock()
}
