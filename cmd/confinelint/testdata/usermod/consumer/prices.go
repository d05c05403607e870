package consumer

import (
	"context"
	"sync"
	"time"
)

// Prices caches item prices; workers read it, the refresher writes it.
type Prices struct {
	mu sync.RWMutex
	//confined:guardedby mu
	bySKU map[string]int64
	//confined:guardedby mu
	refreshed time.Time
}

func newPrices() *Prices { return &Prices{bySKU: map[string]int64{}} }

// Price returns the cached price of sku.
func (p *Prices) Price(sku string) (int64, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	v, ok := p.bySKU[sku]
	return v, ok
}

// Replace swaps in a fresh price list.
func (p *Prices) Replace(prices map[string]int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bySKU = prices
	p.refreshed = time.Now()
}

// Refresh reloads the prices on the shared pool every interval until ctx
// ends; load runs on a pool goroutine and shares nothing with control.
func (c *Consumer) Refresh(ctx context.Context, interval time.Duration, load func() map[string]int64) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.pool.Go(func() { c.prices.Replace(load()) })
		}
	}
}
