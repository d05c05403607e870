// kubernetes/ingress-nginx (then kubernetes/ingress) #768: the secret
// informer's UpdateFunc synced the secret inline, and syncSecret first asks
// controllersInSync(), i.e. HasSynced() of every informer -- including the
// secret informer whose DeltaFIFO.Pop is running the handler with f.lock
// held. DeltaFIFO.HasSynced locks f.lock again.
package main

import (
	"fmt"
	"sync"
)

type Secret struct{ Namespace, Name, Data string }

type Delta struct {
	Type   string
	Object *Secret
}

type DeltaFIFO struct {
	lock                   sync.RWMutex
	cond                   sync.Cond
	items                  map[string][]Delta
	queue                  []string
	populated              bool
	initialPopulationCount int
}

func NewDeltaFIFO() *DeltaFIFO {
	f := &DeltaFIFO{items: map[string][]Delta{}}
	f.cond.L = &f.lock
	return f
}

func key(s *Secret) string { return s.Namespace + "/" + s.Name }

func (f *DeltaFIFO) queueActionLocked(t string, s *Secret) {
	k := key(s)
	if _, ok := f.items[k]; !ok {
		f.queue = append(f.queue, k)
	}
	f.items[k] = append(f.items[k], Delta{t, s})
	f.cond.Broadcast()
}

// Replace is the reflector's initial LIST.
func (f *DeltaFIFO) Replace(list []*Secret) {
	f.lock.Lock()
	defer f.lock.Unlock()
	for _, s := range list {
		f.queueActionLocked("Sync", s)
	}
	f.populated = true
	f.initialPopulationCount = len(f.queue)
}

func (f *DeltaFIFO) Update(s *Secret) {
	f.lock.Lock()
	f.queueActionLocked("Updated", s)
	f.lock.Unlock()
}

func (f *DeltaFIFO) HasSynced() bool {
	f.lock.Lock()
	defer f.lock.Unlock()
	return f.populated && f.initialPopulationCount == 0
}

// Pop runs process with the FIFO lock held.
func (f *DeltaFIFO) Pop(process func([]Delta) error) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	for len(f.queue) == 0 {
		f.cond.Wait()
	}
	id := f.queue[0]
	f.queue = f.queue[1:]
	if f.initialPopulationCount > 0 {
		f.initialPopulationCount--
	}
	item := f.items[id]
	delete(f.items, id)
	return process(item)
}

type ResourceEventHandlerFuncs struct {
	AddFunc    func(obj *Secret)
	UpdateFunc func(old, cur *Secret)
}

// controller is client-go's cache controller built by NewInformer.
type controller struct {
	queue   *DeltaFIFO
	store   map[string]*Secret
	handler ResourceEventHandlerFuncs
}

func (c *controller) HasSynced() bool { return c.queue.HasSynced() }

func (c *controller) processDeltas(deltas []Delta) error {
	for _, d := range deltas {
		if old, ok := c.store[key(d.Object)]; ok {
			c.store[key(d.Object)] = d.Object
			c.handler.UpdateFunc(old, d.Object)
		} else {
			c.store[key(d.Object)] = d.Object
			c.handler.AddFunc(d.Object)
		}
	}
	return nil
}

func (c *controller) processLoop(n int) {
	for i := 0; i < n; i++ {
		c.queue.Pop(c.processDeltas)
	}
}

// GenericController is the ingress controller.
type GenericController struct {
	ingController, svcController, secrController *controller
	secretTracker                                map[string]string
}

func (ic *GenericController) controllersInSync() bool {
	return ic.ingController.HasSynced() && ic.svcController.HasSynced() && ic.secrController.HasSynced()
}

func (ic *GenericController) syncSecret(k string) {
	if !ic.controllersInSync() {
		fmt.Printf("deferring sync of %s till the controllers have synced\n", k)
		return
	}
	ic.secretTracker[k] = ic.secrController.store[k].Data
}

func newController(h ResourceEventHandlerFuncs) *controller {
	return &controller{queue: NewDeltaFIFO(), store: map[string]*Secret{}, handler: h}
}

func main() {
	ic := &GenericController{secretTracker: map[string]string{}}
	noop := ResourceEventHandlerFuncs{AddFunc: func(*Secret) {}, UpdateFunc: func(_, _ *Secret) {}}
	ic.ingController, ic.svcController = newController(noop), newController(noop)
	ic.ingController.queue.Replace(nil)
	ic.svcController.queue.Replace(nil)
	ic.secrController = newController(ResourceEventHandlerFuncs{
		AddFunc: func(*Secret) {},
		UpdateFunc: func(old, cur *Secret) {
			if old.Data != cur.Data {
				ic.syncSecret(key(cur))
			}
		},
	})

	tls := &Secret{"default", "tls-cert", "v1"}
	ic.secrController.queue.Replace([]*Secret{tls})
	ic.secrController.queue.Update(&Secret{"default", "tls-cert", "v2"}) // cert rotated
	ic.secrController.processLoop(1)
	fmt.Printf("secrets synced: %v\n", ic.secretTracker)
}
