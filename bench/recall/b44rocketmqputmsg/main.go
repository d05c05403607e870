// Project: apache/rocketmq-client-go (v2 native Go client for the RocketMQ
// message queue), v2.1.x, 2022.
// Files/functions: consumer/process_queue.go: processQueue.putMessage,
// WithDropped, removeMessage, currentInfo; consumer/push_consumer.go:
// pullMessage callback, consumeMessageCurrently; consumer/consumer.go:
// defaultConsumer.updateProcessQueueTable, GetConsumerRunningInfo.
// Issue/PR: apache/rocketmq-client-go#897 "[bug] all consumer blocked on
// pq.mutex.Lock()", fixed by PR #898 "[ISSUE #897] fix consumer doesn't
// consume message because of blocked on Lock".
//
// putMessage write-locks pq.mutex and, for a concurrent consumer, hands the
// batch to the consume goroutine with a select on pq.msgCh and pq.closeChan.
// When the channel is full and a rebalance drops the queue (WithDropped
// closes closeChan), the closeChan case returns without unlocking pq.mutex:
// the consume goroutine's removeMessage and the admin GetConsumerRunningInfo
// (currentInfo's RLock) then block forever. The fix unlocks before returning.
package main

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

type MessageExt struct {
	QueueOffset int64
	Body        []byte
}

type MessageQueue struct {
	Topic, BrokerName string
	QueueId           int
}

type processQueue struct {
	cachedMsgCount atomic.Int64
	queueOffsetMax int64
	msgCache       map[int64]*MessageExt
	mutex          sync.RWMutex
	dropped        atomic.Bool
	msgCh          chan []*MessageExt
	order          bool
	closeChanOnce  *sync.Once
	closeChan      chan struct{}
}

func newProcessQueue(order bool) *processQueue {
	return &processQueue{msgCache: map[int64]*MessageExt{}, msgCh: make(chan []*MessageExt, 32),
		order: order, closeChanOnce: &sync.Once{}, closeChan: make(chan struct{})}
}

func (pq *processQueue) putMessage(messages ...*MessageExt) {
	if len(messages) == 0 {
		return
	}
	pq.mutex.Lock()
	if pq.IsDroppd() {
		pq.mutex.Unlock()
		return
	}
	if !pq.order {
		select {
		case <-pq.closeChan:
			return
		case pq.msgCh <- messages:
		}
	}
	validMessageCount := 0
	for _, msg := range messages {
		if _, found := pq.msgCache[msg.QueueOffset]; found {
			continue
		}
		pq.msgCache[msg.QueueOffset] = msg
		validMessageCount++
		pq.queueOffsetMax = msg.QueueOffset
	}
	pq.cachedMsgCount.Add(int64(validMessageCount))
	pq.mutex.Unlock()
}

func (pq *processQueue) WithDropped(dropped bool) {
	pq.dropped.Store(dropped)
	pq.closeChanOnce.Do(func() {
		close(pq.closeChan)
	})
}

func (pq *processQueue) IsDroppd() bool { return pq.dropped.Load() }

func (pq *processQueue) getMessages() []*MessageExt {
	select {
	case <-pq.closeChan:
		return nil
	case mq := <-pq.msgCh:
		return mq
	}
}

func (pq *processQueue) removeMessage(messages ...*MessageExt) int64 {
	result := int64(-1)
	pq.mutex.Lock()
	for _, msg := range messages {
		if _, found := pq.msgCache[msg.QueueOffset]; found {
			delete(pq.msgCache, msg.QueueOffset)
			pq.cachedMsgCount.Add(-1)
		}
	}
	if len(pq.msgCache) > 0 {
		offsets := make([]int64, 0, len(pq.msgCache))
		for o := range pq.msgCache {
			offsets = append(offsets, o)
		}
		sort.Slice(offsets, func(i, j int) bool { return offsets[i] < offsets[j] })
		result = offsets[0]
	}
	pq.mutex.Unlock()
	return result
}

type ProcessQueueInfo struct {
	CachedMsgCount int
	Dropped        bool
}

func (pq *processQueue) currentInfo() ProcessQueueInfo {
	pq.mutex.RLock()
	defer pq.mutex.RUnlock()
	return ProcessQueueInfo{CachedMsgCount: len(pq.msgCache), Dropped: pq.dropped.Load()}
}

type pushConsumer struct {
	processQueueTable sync.Map // MessageQueue -> *processQueue
	listener          func(msgs []*MessageExt)
}

// pullMessage is the pull loop of one queue; each broker response is handed
// to putMessage by the pull callback.
func (pc *pushConsumer) pullMessage(mq MessageQueue, pq *processQueue) {
	var next int64
	for !pq.IsDroppd() {
		batch := []*MessageExt{{QueueOffset: next, Body: []byte("order-created")}}
		next++
		pq.putMessage(batch...)
	}
}

func (pc *pushConsumer) consumeMessageCurrently(pq *processQueue, mq MessageQueue) {
	for {
		msgs := pq.getMessages()
		if msgs == nil || pq.IsDroppd() {
			return
		}
		pc.listener(msgs)
		pq.removeMessage(msgs...)
	}
}

// updateProcessQueueTable drops the queues that are no longer assigned.
func (pc *pushConsumer) updateProcessQueueTable(topic string, mqs []MessageQueue) {
	assigned := map[MessageQueue]bool{}
	for _, mq := range mqs {
		assigned[mq] = true
	}
	pc.processQueueTable.Range(func(key, value interface{}) bool {
		mq, pq := key.(MessageQueue), value.(*processQueue)
		if mq.Topic == topic && !assigned[mq] {
			pq.WithDropped(true)
			pc.processQueueTable.Delete(mq)
			fmt.Println("rebalance: dropped", mq.BrokerName, mq.QueueId)
		}
		return true
	})
}

func (pc *pushConsumer) GetConsumerRunningInfo(pqs []*processQueue) []ProcessQueueInfo {
	var infos []ProcessQueueInfo
	for _, pq := range pqs {
		infos = append(infos, pq.currentInfo())
	}
	return infos
}

func main() {
	pc := &pushConsumer{listener: func(msgs []*MessageExt) { time.Sleep(300 * time.Millisecond) }}
	mq := MessageQueue{Topic: "orders", BrokerName: "broker-a", QueueId: 0}
	pq := newProcessQueue(false)
	pc.processQueueTable.Store(mq, pq)
	go pc.consumeMessageCurrently(pq, mq)
	go pc.pullMessage(mq, pq)

	time.Sleep(100 * time.Millisecond) // msgCh is full, the pull callback waits
	pc.updateProcessQueueTable("orders", nil)
	time.Sleep(10 * time.Millisecond)
	fmt.Printf("running info: %+v\n", pc.GetConsumerRunningInfo([]*processQueue{pq}))
}
