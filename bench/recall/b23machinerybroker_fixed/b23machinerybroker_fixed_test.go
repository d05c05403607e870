// Project: RichardKnop/machinery (v1/brokers)
// Bug: Broker.StopConsuming took registeredTaskNamesMu to stop accepting new
// task names and then waited on processingWG while still holding it; an
// in-flight delivery goroutine calls IsTaskRegistered (RLock on the same
// mutex) before it can finish and call processingWG.Done.
// Fix: update the registered task names under the lock, release it, and only
// then wait for in-flight processing to drain.
package b23machinerybroker_fixed

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

type Signature struct {
	UUID       string
	Name       string
	RoutingKey string
	Args       []string
	RetryCount int
}

type TaskProcessor interface {
	Process(signature *Signature) error
	CustomQueue() string
	PreConsumeHandler() bool
}

type Worker struct {
	ConsumerTag string
	Concurrency int
	Queue       string
	processed   []string
	mu          sync.Mutex
}

func (w *Worker) Process(signature *Signature) error {
	time.Sleep(30 * time.Millisecond)
	w.mu.Lock()
	w.processed = append(w.processed, signature.UUID)
	w.mu.Unlock()
	return nil
}

func (w *Worker) CustomQueue() string     { return w.Queue }
func (w *Worker) PreConsumeHandler() bool { return true }

type ErrTaskNotRegistered struct{ name string }

func (e ErrTaskNotRegistered) Error() string { return fmt.Sprintf("task not registered: %s", e.name) }

type Broker struct {
	registeredTaskNames   []string
	registeredTaskNamesMu sync.RWMutex
	retry                 bool
	stopChan              chan int

	processingWG      sync.WaitGroup
	receivingWG       sync.WaitGroup
	stopReceivingChan chan int
	deliveries        chan []byte
}

func NewBroker() *Broker {
	return &Broker{
		retry:             true,
		stopChan:          make(chan int),
		stopReceivingChan: make(chan int),
		deliveries:        make(chan []byte, 10),
	}
}

func (b *Broker) SetRegisteredTaskNames(names []string) {
	b.registeredTaskNamesMu.Lock()
	defer b.registeredTaskNamesMu.Unlock()
	b.registeredTaskNames = names
}

func (b *Broker) IsTaskRegistered(name string) bool {
	b.registeredTaskNamesMu.RLock()
	defer b.registeredTaskNamesMu.RUnlock()
	for _, n := range b.registeredTaskNames {
		if n == name {
			return true
		}
	}
	return false
}

func (b *Broker) StartConsuming(consumerTag string, concurrency int, taskProcessor TaskProcessor) (bool, error) {
	b.receivingWG.Add(1)
	defer b.receivingWG.Done()
	for {
		select {
		case <-b.stopReceivingChan:
			return b.retry, nil
		case d := <-b.deliveries:
			b.processingWG.Add(1)
			go func() {
				defer b.processingWG.Done()
				if err := b.consumeOne(d, taskProcessor); err != nil {
					fmt.Println("consume error:", err)
				}
			}()
		}
	}
}

func (b *Broker) consumeOne(delivery []byte, taskProcessor TaskProcessor) error {
	signature := new(Signature)
	if err := json.Unmarshal(delivery, signature); err != nil {
		return errors.New("unmarshal task: " + err.Error())
	}
	if err := taskProcessor.Process(signature); err != nil {
		return err
	}
	if !b.IsTaskRegistered(signature.Name) {
		return ErrTaskNotRegistered{name: signature.Name}
	}
	return nil
}

func (b *Broker) StopConsuming() {
	b.retry = false
	b.stopReceivingChan <- 1
	b.receivingWG.Wait()

	b.registeredTaskNamesMu.Lock()
	b.registeredTaskNames = nil
	b.registeredTaskNamesMu.Unlock()
	b.processingWG.Wait()
}

func TestProbe(t *testing.T) {
	broker := NewBroker()
	broker.SetRegisteredTaskNames([]string{"add", "send_email"})
	worker := &Worker{ConsumerTag: "machinery_worker", Concurrency: 2, Queue: "machinery_tasks"}

	consumed := make(chan error, 1)
	go func() {
		_, err := broker.StartConsuming(worker.ConsumerTag, worker.Concurrency, worker)
		consumed <- err
	}()
	body, _ := json.Marshal(&Signature{UUID: "task_1", Name: "add", Args: []string{"1", "2"}})
	broker.deliveries <- body
	time.Sleep(10 * time.Millisecond)

	broker.StopConsuming()
	if err := <-consumed; err != nil {
		t.Fatal(err)
	}
}
