package main

import (
	"fmt"
	"sync"
	"time"
)

type Hash [4]byte

type invoiceExpiry struct {
	PaymentHash Hash
	Expiry      time.Time
}

type InvoiceExpiryWatcher struct {
	cancelInvoice func(Hash, bool) error
	newInvoices   chan []invoiceExpiry
	expired       []invoiceExpiry
	quit          chan struct{}
	wg            sync.WaitGroup
}

func (ew *InvoiceExpiryWatcher) Start(cancelInvoice func(Hash, bool) error) {
	ew.cancelInvoice = cancelInvoice
	ew.wg.Add(1)
	go ew.mainLoop()
}

func (ew *InvoiceExpiryWatcher) AddInvoices(invoices ...invoiceExpiry) {
	select {
	case ew.newInvoices <- invoices:
	case <-ew.quit:
	}
}

func (ew *InvoiceExpiryWatcher) expireInvoice(hash Hash, force bool) {
	if err := ew.cancelInvoice(hash, force); err != nil {
		fmt.Println("unable to cancel invoice:", err)
	}
}

func (ew *InvoiceExpiryWatcher) mainLoop() {
	defer ew.wg.Done()
	for {
		for _, inv := range ew.expired {
			ew.expireInvoice(inv.PaymentHash, false)
		}
		ew.expired = nil
		select {
		case invoices := <-ew.newInvoices:
			ew.expired = append(ew.expired, invoices...)
		case <-ew.quit:
			return
		}
	}
}

type InvoiceRegistry struct {
	sync.RWMutex
	invoices      map[Hash]string
	expiryWatcher *InvoiceExpiryWatcher
}

func (i *InvoiceRegistry) cancelInvoiceImpl(payHash Hash, cancelAccepted bool) error {
	i.Lock()
	defer i.Unlock()
	i.invoices[payHash] = "canceled"
	return nil
}

func (i *InvoiceRegistry) notifyExitHopHtlcLocked(rHash Hash) (*invoiceExpiry, error) {
	time.Sleep(20 * time.Millisecond) // update invoice in db
	i.invoices[rHash] = "accepted"
	return &invoiceExpiry{PaymentHash: rHash, Expiry: time.Now().Add(time.Hour)}, nil
}

func (i *InvoiceRegistry) NotifyExitHopHtlc(rHash Hash) error {
	i.Lock()
	expiry, err := i.notifyExitHopHtlcLocked(rHash)
	i.Unlock()
	if err != nil {
		return err
	}
	if expiry != nil {
		i.expiryWatcher.AddInvoices(*expiry)
	}
	return nil
}

func main() {
	ew := &InvoiceExpiryWatcher{newInvoices: make(chan []invoiceExpiry), quit: make(chan struct{})}
	ew.expired = []invoiceExpiry{{PaymentHash: Hash{0x4a, 0x0e}}}
	reg := &InvoiceRegistry{invoices: map[Hash]string{{0x4a, 0x0e}: "open"}, expiryWatcher: ew}

	done := make(chan struct{})
	go func() {
		defer close(done)
		fmt.Println("notify:", reg.NotifyExitHopHtlc(Hash{0x86, 0x01}))
	}()
	time.Sleep(5 * time.Millisecond)
	ew.Start(reg.cancelInvoiceImpl)

	<-done
	close(ew.quit)
	ew.wg.Wait()
	fmt.Println("invoices:", reg.invoices)
}
