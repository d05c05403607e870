// Like NSQ nsqd Topic/Channel: getOrCreateChannelLocked must be called with
// t.Lock held and is only called that way; GetChannel starts the channel
// pump goroutine while still holding t's lock, and the pump takes the same
// lock later (after the starter has released it). Order is topic -> channel.
package main

import (
	"fmt"
	"sync"
)

type Channel struct {
	name          string
	memoryMsgChan chan string
	exitChan      chan struct{}

	mu        sync.Mutex
	delivered int
	backend   int
}

type Topic struct {
	sync.RWMutex
	channels map[string]*Channel
	paused   bool
	exiting  bool
	pumped   int
	wg       sync.WaitGroup
}

// getOrCreateChannelLocked returns the named channel, creating it if needed.
// The caller must hold t.Lock().
func (t *Topic) getOrCreateChannelLocked(name string) (*Channel, bool) {
	if ch, ok := t.channels[name]; ok {
		return ch, false
	}
	ch := &Channel{name: name, memoryMsgChan: make(chan string, 16), exitChan: make(chan struct{})}
	t.channels[name] = ch
	return ch, true
}

func (t *Topic) GetChannel(name string) *Channel {
	t.Lock()
	defer t.Unlock()
	if t.exiting {
		return nil
	}
	ch, isNew := t.getOrCreateChannelLocked(name)
	if isNew {
		t.wg.Add(1)
		go t.channelPump(ch) // started under t.Lock; takes t's lock later
	}
	return ch
}

func (t *Topic) channelPump(ch *Channel) {
	defer t.wg.Done()
	for {
		select {
		case <-ch.memoryMsgChan:
			t.RLock()
			paused := t.paused
			t.RUnlock()
			if !paused {
				ch.mu.Lock()
				ch.delivered++
				ch.mu.Unlock()
			}
		case <-ch.exitChan:
			t.Lock()
			t.pumped++
			t.Unlock()
			return
		}
	}
}

func (t *Topic) SetPaused(p bool) {
	t.Lock()
	t.paused = p
	t.Unlock()
}

// PutMessage fans out under RLock; the per-channel send never blocks.
func (t *Topic) PutMessage(msg string) {
	t.RLock()
	defer t.RUnlock()
	for _, ch := range t.channels {
		select {
		case ch.memoryMsgChan <- msg:
		default:
			ch.mu.Lock()
			ch.backend++
			ch.mu.Unlock()
		}
	}
}

func (t *Topic) Close() int {
	t.Lock()
	t.exiting = true
	chans := make([]*Channel, 0, len(t.channels))
	for _, ch := range t.channels {
		chans = append(chans, ch)
	}
	t.Unlock()
	for _, ch := range chans {
		close(ch.exitChan)
	}
	t.wg.Wait() // pumps take t.Lock on exit; we do not hold it here
	t.RLock()
	defer t.RUnlock()
	return t.pumped
}

func main() {
	t := &Topic{channels: make(map[string]*Channel)}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				t.GetChannel(fmt.Sprintf("ch%d", (i+j)%5))
				t.PutMessage(fmt.Sprintf("m%d-%d", i, j))
				if j%25 == 0 {
					t.SetPaused(j%50 == 0)
				}
			}
		}(i)
	}
	wg.Wait()
	fmt.Println("pumps stopped:", t.Close())
}
