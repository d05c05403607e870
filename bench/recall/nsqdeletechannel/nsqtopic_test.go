// Project: nsqio/nsq (nsqd)
// Bug: Topic.DeleteExistingChannel held the topic write lock while calling
//      channel.Delete(). Deleting a channel notifies nsqd through the channel's
//      back-pointer (c.nsqd.Notify), and persisting metadata walks n.topicMap and
//      takes every topic's lock to list its channels. The topic being modified is
//      reached a second time through nsqd.topicMap and its lock is re-acquired by
//      the same goroutine: self-deadlock.
// Fix: remove the channel from channelMap under the topic lock, release the lock,
//      and only then call channel.Delete() (as nsqd's DeleteExistingChannel does).

package nsqtopic

import (
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

type NSQD struct {
	sync.RWMutex
	topicMap     map[string]*Topic
	notifyChan   chan interface{}
	isLoading    int32
	dataPath     string
	lastMetadata []byte
}

type Topic struct {
	sync.RWMutex
	name       string
	channelMap map[string]*Channel
	paused     int32
	ephemeral  bool
	nsqd       *NSQD
}

type Channel struct {
	sync.RWMutex
	topicName        string
	name             string
	nsqd             *NSQD
	exitFlag         int32
	exitMutex        sync.RWMutex
	paused           int32
	ephemeral        bool
	clients          map[int64]struct{}
	inFlightMessages map[string][]byte
}

type channelMeta struct {
	Name   string `json:"name"`
	Paused bool   `json:"paused"`
}

type topicMeta struct {
	Name     string        `json:"name"`
	Paused   bool          `json:"paused"`
	Channels []channelMeta `json:"channels"`
}

type metadata struct {
	Topics []topicMeta `json:"topics"`
}

func New(dataPath string) *NSQD {
	return &NSQD{topicMap: make(map[string]*Topic), notifyChan: make(chan interface{}, 16), dataPath: dataPath}
}

func (n *NSQD) GetTopic(topicName string) *Topic {
	n.RLock()
	t, ok := n.topicMap[topicName]
	n.RUnlock()
	if ok {
		return t
	}
	n.Lock()
	defer n.Unlock()
	t = &Topic{name: topicName, channelMap: make(map[string]*Channel), nsqd: n}
	n.topicMap[topicName] = t
	return t
}

// Notify informs lookupd about a topic/channel change and persists metadata.
func (n *NSQD) Notify(v interface{}, persist bool) {
	loading := atomic.LoadInt32(&n.isLoading) == 1
	select {
	case n.notifyChan <- v:
	default:
	}
	if loading || !persist {
		return
	}
	n.Lock()
	defer n.Unlock()
	_ = n.PersistMetadata()
}

// PersistMetadata must be called with n.Lock held.
func (n *NSQD) PersistMetadata() error {
	js := metadata{}
	for _, topic := range n.topicMap {
		tm := topicMeta{Name: topic.name, Paused: atomic.LoadInt32(&topic.paused) == 1}
		topic.Lock()
		for _, channel := range topic.channelMap {
			channel.Lock()
			if !channel.ephemeral {
				tm.Channels = append(tm.Channels, channelMeta{Name: channel.name, Paused: atomic.LoadInt32(&channel.paused) == 1})
			}
			channel.Unlock()
		}
		topic.Unlock()
		js.Topics = append(js.Topics, tm)
	}
	data, err := json.Marshal(&js)
	if err != nil {
		return err
	}
	n.lastMetadata = data
	return nil
}

func (t *Topic) GetChannel(channelName string) *Channel {
	t.Lock()
	channel, isNew := t.getOrCreateChannel(channelName)
	t.Unlock()
	if isNew {
		t.nsqd.Notify(channel, !channel.ephemeral)
	}
	return channel
}

func (t *Topic) getOrCreateChannel(channelName string) (*Channel, bool) {
	if c, ok := t.channelMap[channelName]; ok {
		return c, false
	}
	c := &Channel{topicName: t.name, name: channelName, nsqd: t.nsqd,
		clients: make(map[int64]struct{}), inFlightMessages: make(map[string][]byte)}
	t.channelMap[channelName] = c
	return c, true
}

// DeleteExistingChannel removes a channel from the topic only if it exists.
func (t *Topic) DeleteExistingChannel(channelName string) error {
	t.Lock()
	defer t.Unlock()
	channel, ok := t.channelMap[channelName]
	if !ok {
		return errors.New("channel does not exist")
	}
	delete(t.channelMap, channelName)
	// delete empties the channel before closing
	// (so that we dont leave any messages around)
	return channel.Delete()
}

func (c *Channel) Delete() error { return c.exit(true) }

func (c *Channel) exit(deleted bool) error {
	c.exitMutex.Lock()
	defer c.exitMutex.Unlock()
	if !atomic.CompareAndSwapInt32(&c.exitFlag, 0, 1) {
		return errors.New("exiting")
	}
	if deleted {
		// since we are explicitly deleting a channel (not just at system exit time)
		// de-register this from the lookupd
		c.nsqd.Notify(c, !c.ephemeral)
	}
	c.Lock()
	for id := range c.clients {
		delete(c.clients, id)
	}
	c.inFlightMessages = make(map[string][]byte)
	c.Unlock()
	return nil
}

func TestDeleteExistingChannel(t *testing.T) {
	n := New(t.TempDir())
	topic := n.GetTopic("events")
	topic.GetChannel("archive")
	topic.GetChannel("metrics")

	done := make(chan error)
	go func() { // DELETE /channel/delete?topic=events&channel=archive
		done <- topic.DeleteExistingChannel("archive")
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	topic.RLock()
	defer topic.RUnlock()
	if _, ok := topic.channelMap["archive"]; ok || len(topic.channelMap) != 1 {
		t.Fatalf("unexpected channels: %v", topic.channelMap)
	}
}
