// Pattern: nsqio/nsq nsqd Topic/Channel messagePump. PutMessage takes the
// topic lock and pushes onto memoryMsgChan (buffered, mem-queue-size). The
// messagePump goroutine selects on memoryMsgChan and exitChan; only on its
// exit path does it take the topic lock to flush what is left in memory to
// the backend.
//
// Why it is safe: the pump never locks while it is in its receive loop. The
// exit signal is closed only after producersWG.Wait(), i.e. after every
// producer has returned and released the lock, so by the time the pump
// locks on exit nobody can be blocked sending with the lock held.
package main

import (
	"fmt"
	"sync"
)

const memQueueSize = 16

type topic struct {
	mu            sync.Mutex
	name          string
	messageCount  int
	memoryMsgChan chan string
	backend       []string // stands in for the disk queue
	exitChan      chan struct{}
}

func (t *topic) PutMessage(body string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.messageCount++
	t.memoryMsgChan <- body
}

func (t *topic) messagePump(done chan<- struct{}) {
	defer close(done)
	delivered := 0
	for {
		select {
		case msg := <-t.memoryMsgChan:
			_ = msg // deliver to subscribers (no topic lock needed)
			delivered++
		case <-t.exitChan:
			goto exit
		}
	}
exit:
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		select {
		case msg := <-t.memoryMsgChan:
			t.backend = append(t.backend, msg)
		default:
			fmt.Printf("topic %s: delivered %d, flushed %d of %d to backend\n",
				t.name, delivered, len(t.backend), t.messageCount)
			return
		}
	}
}

func main() {
	t := &topic{
		name:          "events",
		memoryMsgChan: make(chan string, memQueueSize),
		exitChan:      make(chan struct{}),
	}
	pumpDone := make(chan struct{})
	go t.messagePump(pumpDone)

	var producersWG sync.WaitGroup
	for p := 0; p < 4; p++ {
		producersWG.Add(1)
		go func(p int) {
			defer producersWG.Done()
			for i := 0; i < 25; i++ {
				t.PutMessage(fmt.Sprintf("p%d-m%d", p, i))
			}
		}(p)
	}
	producersWG.Wait() // no producer is sending any more
	close(t.exitChan)
	<-pumpDone
}
