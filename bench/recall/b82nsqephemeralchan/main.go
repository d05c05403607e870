// Project: nsqio/nsq (nsqd/channel.go: Channel.RemoveClient, Channel.exit; nsqd/topic.go: Topic.DeleteExistingChannel), ephemeral channels, 2013 (approximate).
// Bug: when the last consumer of an ephemeral ("#ephemeral") channel disconnects, Channel.RemoveClient, still holding the channel's write lock, ran the deleter (sync.Once) whose deleteCallback is Topic.DeleteExistingChannel; that calls channel.Delete, and Channel.exit read-locks the same channel to close its clients, so the client's messagePump goroutine deadlocks on itself. The fix starts the deletion in a new goroutine (go c.deleter.Do(func() { c.deleteCallback(c) })).
package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type Consumer interface {
	UnPause()
	Pause()
	Close() error
	Empty()
}

type clientV2 struct {
	ID       int64
	Hostname string
	closed   int32
}

func (c *clientV2) UnPause()     {}
func (c *clientV2) Pause()       {}
func (c *clientV2) Empty()       {}
func (c *clientV2) Close() error { atomic.StoreInt32(&c.closed, 1); return nil }

type NSQD struct {
	sync.RWMutex
	topicMap map[string]*Topic
}

type Topic struct {
	sync.RWMutex
	name       string
	channelMap map[string]*Channel
	nsqd       *NSQD
}

type Channel struct {
	sync.RWMutex
	topicName      string
	name           string
	nsqd           *NSQD
	clients        map[int64]Consumer
	ephemeral      bool
	deleteCallback func(*Channel)
	deleter        sync.Once
	exitFlag       int32
	exitMutex      sync.RWMutex
	inFlight       map[string]struct{}
}

func NewChannel(topicName, channelName string, nsqd *NSQD, deleteCallback func(*Channel)) *Channel {
	return &Channel{
		topicName: topicName, name: channelName, nsqd: nsqd,
		clients:        make(map[int64]Consumer),
		ephemeral:      strings.HasSuffix(channelName, "#ephemeral"),
		deleteCallback: deleteCallback,
		inFlight:       make(map[string]struct{}),
	}
}

func (n *NSQD) GetTopic(topicName string) *Topic {
	n.Lock()
	defer n.Unlock()
	if t, ok := n.topicMap[topicName]; ok {
		return t
	}
	t := &Topic{name: topicName, channelMap: make(map[string]*Channel), nsqd: n}
	n.topicMap[topicName] = t
	return t
}

// GetChannel performs a thread safe operation to return a pointer to a Channel object.
func (t *Topic) GetChannel(channelName string) *Channel {
	t.Lock()
	defer t.Unlock()
	channel, ok := t.channelMap[channelName]
	if !ok {
		deleteCallback := func(c *Channel) {
			t.DeleteExistingChannel(c.name)
		}
		channel = NewChannel(t.name, channelName, t.nsqd, deleteCallback)
		t.channelMap[channelName] = channel
	}
	return channel
}

// DeleteExistingChannel removes a channel from the topic only if it exists.
func (t *Topic) DeleteExistingChannel(channelName string) error {
	t.RLock()
	channel, ok := t.channelMap[channelName]
	t.RUnlock()
	if !ok {
		return errors.New("channel does not exist")
	}
	// delete empties the channel before closing
	// (so that we dont leave any messages around)
	channel.Delete()

	t.Lock()
	delete(t.channelMap, channelName)
	t.Unlock()
	return nil
}

func (c *Channel) Delete() error { return c.exit(true) }

func (c *Channel) exit(deleted bool) error {
	c.exitMutex.Lock()
	defer c.exitMutex.Unlock()
	if !atomic.CompareAndSwapInt32(&c.exitFlag, 0, 1) {
		return errors.New("exiting")
	}
	// this forceably closes client connections
	c.RLock()
	for _, client := range c.clients {
		client.Close()
	}
	c.RUnlock()
	if deleted {
		c.Empty()
	}
	return nil
}

func (c *Channel) Empty() {
	c.Lock()
	defer c.Unlock()
	c.inFlight = make(map[string]struct{})
	for _, client := range c.clients {
		client.Empty()
	}
}

// AddClient adds a client to the Channel's client list.
func (c *Channel) AddClient(clientID int64, client Consumer) {
	c.Lock()
	defer c.Unlock()
	c.clients[clientID] = client
}

// RemoveClient removes a client from the Channel's client list.
func (c *Channel) RemoveClient(clientID int64) {
	c.Lock()
	defer c.Unlock()
	if _, ok := c.clients[clientID]; !ok {
		return
	}
	delete(c.clients, clientID)
	if len(c.clients) == 0 && c.ephemeral {
		c.deleter.Do(func() { c.deleteCallback(c) })
	}
}

func main() {
	n := &NSQD{topicMap: make(map[string]*Topic)}
	topic := n.GetTopic("clicks")
	ch := topic.GetChannel("tail123#ephemeral")
	client := &clientV2{ID: 1, Hostname: "nsq_tail"}
	ch.AddClient(client.ID, client)

	// protocolV2.messagePump exits when the consumer disconnects.
	ch.RemoveClient(client.ID)

	for i := 0; i < 100; i++ {
		topic.RLock()
		left := len(topic.channelMap)
		topic.RUnlock()
		if left == 0 {
			fmt.Println("ephemeral channel deleted")
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	panic("ephemeral channel was not deleted")
}
