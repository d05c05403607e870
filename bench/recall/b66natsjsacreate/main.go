// Shape of nats-server JetStream: stream creation in an account and server shutdown.
package main

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

type StreamConfig struct {
	Name     string
	Subjects []string
}

type streamAssignment struct {
	Config  *StreamConfig
	Created time.Time
}

type consumer struct {
	mu      sync.RWMutex
	name    string
	pending map[string]int
}

type stream struct {
	mu        sync.RWMutex
	cfg       StreamConfig
	created   time.Time
	consumers map[string]*consumer
}

type Account struct {
	Name string
	jsa  *jsAccount
}

type jsAccount struct {
	mu      sync.RWMutex
	js      *jetStream
	account *Account
	streams map[string]*stream
}

type jetStream struct {
	mu          sync.RWMutex
	accounts    map[string]*jsAccount
	assignments map[string]*streamAssignment
}

// addStreamWithAssignment runs on the account's API goroutine.
func (a *Account) addStreamWithAssignment(config *StreamConfig, sa *streamAssignment) (*stream, error) {
	jsa := a.jsa
	js := jsa.js

	jsa.mu.Lock()
	defer jsa.mu.Unlock()
	if _, ok := jsa.streams[config.Name]; ok {
		return nil, fmt.Errorf("stream name already in use")
	}
	mset := &stream{cfg: *config, consumers: map[string]*consumer{}}
	mset.createStore() // opening the file store takes a while

	// Add created timestamp used for the store, must match that of the stream assignment.
	if sa != nil {
		js.mu.RLock()
		mset.created = sa.Created
		js.mu.RUnlock()
	}
	jsa.streams[config.Name] = mset
	return mset, nil
}

func (mset *stream) createStore() { time.Sleep(40 * time.Millisecond) }

// signalPullConsumers is called while the server shuts down.
func (js *jetStream) signalPullConsumers() int {
	js.mu.RLock()
	defer js.mu.RUnlock()
	names := make([]string, 0, len(js.accounts))
	for n := range js.accounts {
		names = append(names, n)
	}
	sort.Strings(names)
	signalled := 0
	for _, n := range names {
		jsa := js.accounts[n]
		jsa.mu.RLock()
		for _, mset := range jsa.streams {
			mset.mu.RLock()
			for _, o := range mset.consumers {
				o.mu.RLock()
				signalled += len(o.pending)
				o.mu.RUnlock()
			}
			mset.mu.RUnlock()
		}
		jsa.mu.RUnlock()
	}
	return signalled
}

// processStreamAssignment is the meta layer applying a new assignment.
func (js *jetStream) processStreamAssignment(sa *streamAssignment) {
	js.mu.Lock()
	defer js.mu.Unlock()
	js.assignments[sa.Config.Name] = sa
}

func main() {
	js := &jetStream{accounts: map[string]*jsAccount{}, assignments: map[string]*streamAssignment{}}
	acc := &Account{Name: "APP"}
	acc.jsa = &jsAccount{js: js, account: acc, streams: map[string]*stream{}}
	js.accounts[acc.Name] = acc.jsa

	sa := &streamAssignment{Config: &StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}, Created: time.Now()}

	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // stream create request
		defer wg.Done()
		if _, err := acc.addStreamWithAssignment(sa.Config, sa); err != nil {
			fmt.Println("add stream:", err)
		}
	}()
	go func() { // server shutdown
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		fmt.Println("signalled pull consumers:", js.signalPullConsumers())
	}()
	go func() { // meta layer
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		js.processStreamAssignment(&streamAssignment{Config: &StreamConfig{Name: "EVENTS"}, Created: time.Now()})
	}()
	wg.Wait()
	fmt.Println("streams:", len(acc.jsa.streams), "assignments:", len(js.assignments))
}
