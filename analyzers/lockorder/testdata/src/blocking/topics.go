package blocking

import "sync"

// Subscriber channels kept per topic, in a map of slices
// (`topics[name] = append(topics[name], ch)`), are the channels
// subscribed, whichever loop made each: a notifier that sends to a
// topic's channels under its read lock waits for a loop that, on its way
// out, unsubscribes under the write lock (nsq's notify.Post and its
// lookup loop).

var (
	topicsMu sync.RWMutex
	topics   = map[string][]chan string{}
)

func subscribe(name string, ch chan string) {
	topicsMu.Lock()
	defer topicsMu.Unlock()
	topics[name] = append(topics[name], ch)
}

func unsubscribe(name string, ch chan string) {
	topicsMu.Lock()
	defer topicsMu.Unlock()
	subs := topics[name]
	for i, c := range subs {
		if c == ch {
			topics[name] = append(subs[:i], subs[i+1:]...)
			return
		}
	}
}

func post(name, msg string) {
	topicsMu.RLock()
	defer topicsMu.RUnlock()
	for _, ch := range topics[name] {
		ch <- msg // want `topicsMu \(taken at topics.go:36\) is held across a channel send; the goroutine started by the go statement, which would unblock it, also takes topicsMu \[blocking-held\]`
	}
}

type lookup struct {
	exit chan struct{}
}

// loop reads two topics until told to exit, then unsubscribes.
func (l *lookup) loop() {
	changes := make(chan string)
	created := make(chan string)
	subscribe("change", changes)
	subscribe("create", created)
	for {
		select {
		case <-changes:
		case <-created:
		case <-l.exit:
			unsubscribe("change", changes)
			unsubscribe("create", created)
			return
		}
	}
}

func runLookup() *lookup {
	l := &lookup{exit: make(chan struct{})}
	go l.loop()
	return l
}

// Correct: the mailbox copies a topic's channels under its read lock and
// sends after letting it go.
var (
	boxesMu sync.RWMutex
	boxes   = map[string][]chan string{}
)

func register(name string, ch chan string) {
	boxesMu.Lock()
	defer boxesMu.Unlock()
	boxes[name] = append(boxes[name], ch)
}

func unregister(name string) {
	boxesMu.Lock()
	defer boxesMu.Unlock()
	delete(boxes, name)
}

func deliver(name, msg string) {
	boxesMu.RLock()
	subs := append([]chan string(nil), boxes[name]...)
	boxesMu.RUnlock()
	for _, ch := range subs {
		ch <- msg
	}
}

type inbox struct {
	exit chan struct{}
}

func (b *inbox) loop() {
	mail := make(chan string)
	register("mail", mail)
	for {
		select {
		case <-mail:
		case <-b.exit:
			unregister("mail")
			return
		}
	}
}

func runInbox() *inbox {
	b := &inbox{exit: make(chan struct{})}
	go b.loop()
	return b
}
