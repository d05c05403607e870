// Project: nsq (nsqd/lookup.go, nsqd/topic.go, nsqd/nsqd.go) with github.com/bitly/go-notify, early 2013
// Issue: nsqio/nsq#123 "unlucky timing of notify.Post can cause exit deadlock"
//
// go-notify keeps its subscribers in a package-level map guarded by one RWMutex.
// Post read-locks it (line 57) and sends the event to every registered channel
// while holding the read lock (line 64). nsqd's lookupLoop is the only reader of
// its notify channels; on exit it leaves its select loop and then unregisters with
// notify.Stop, which write-locks (line 37, called at line 130). An ephemeral
// channel removed during shutdown posts "channel_change" (line 94) after
// lookupLoop stopped reading: Post blocks in the send holding the read lock, Stop blocks
// on the write lock, lookupLoop never finishes, and NSQd.Exit waits forever on the
// waitGroup (line 144). main() calls Exit while a consumer of an ephemeral channel
// disconnects.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ---- github.com/bitly/go-notify ----

var events = make(map[string][]chan interface{})
var rwMutex sync.RWMutex

// Start begins listening for notifications on event, sending them to outputChan.
func Start(event string, outputChan chan interface{}) {
	rwMutex.Lock()
	defer rwMutex.Unlock()
	events[event] = append(events[event], outputChan)
}

// Stop stops listening for event on outputChan and closes it.
func Stop(event string, outputChan chan interface{}) error {
	rwMutex.Lock()
	defer rwMutex.Unlock()
	newArray := make([]chan interface{}, 0)
	outChans, ok := events[event]
	if !ok {
		return errors.New("E_NOT_FOUND")
	}
	for _, ch := range outChans {
		if ch != outputChan {
			newArray = append(newArray, ch)
		} else {
			close(ch)
		}
	}
	events[event] = newArray
	return nil
}

// Post sends data to every channel listening for event.
func Post(event string, data interface{}) error {
	rwMutex.RLock()
	defer rwMutex.RUnlock()
	outChans, ok := events[event]
	if !ok {
		return errors.New("E_NOT_FOUND")
	}
	for _, outputChan := range outChans {
		outputChan <- data
	}
	return nil
}

// ---- nsqd ----

type Channel struct {
	name      string
	ephemeral bool
}

type Topic struct {
	sync.RWMutex
	name       string
	channelMap map[string]*Channel
}

// DeleteExistingChannel removes a channel from the topic and lets lookupd know.
func (t *Topic) DeleteExistingChannel(channelName string) error {
	t.Lock()
	channel, ok := t.channelMap[channelName]
	if !ok {
		t.Unlock()
		return errors.New("channel does not exist")
	}
	delete(t.channelMap, channelName)
	t.Unlock()

	// update lookupd with the channel removal
	return Post("channel_change", channel)
}

type NSQd struct {
	exitChan  chan int
	waitGroup sync.WaitGroup
	peers     []string
}

func (n *NSQd) lookupLoop() {
	notifyChannelChan := make(chan interface{})
	notifyTopicChan := make(chan interface{})
	Start("channel_change", notifyChannelChan)
	Start("new_topic", notifyTopicChan)

	ticker := time.NewTicker(15 * time.Second)
	for {
		select {
		case <-ticker.C:
			// send a heartbeat to every lookupd
		case c := <-notifyChannelChan:
			fmt.Printf("LOOKUP: REGISTER/UNREGISTER channel %s\n", c.(*Channel).name)
		case t := <-notifyTopicChan:
			fmt.Printf("LOOKUP: REGISTER topic %s\n", t.(*Topic).name)
		case <-n.exitChan:
			goto exit
		}
	}

exit:
	fmt.Println("LOOKUP: closing")
	ticker.Stop()
	for range n.peers {
		// closing each lookupd connection takes a moment
		time.Sleep(25 * time.Millisecond)
	}
	Stop("channel_change", notifyChannelChan)
	Stop("new_topic", notifyTopicChan)
}

func (n *NSQd) Main() {
	n.waitGroup.Add(1)
	go func() {
		n.lookupLoop()
		n.waitGroup.Done()
	}()
}

func (n *NSQd) Exit() {
	close(n.exitChan)
	n.waitGroup.Wait()
	fmt.Println("NSQ: exited")
}

func main() {
	n := &NSQd{exitChan: make(chan int), peers: []string{"lookupd-1:4160", "lookupd-2:4160"}}
	n.Main()

	topic := &Topic{name: "events", channelMap: map[string]*Channel{
		"tail#ephemeral": {name: "tail#ephemeral", ephemeral: true},
	}}

	// The last consumer of the ephemeral channel goes away during shutdown.
	go func() {
		time.Sleep(30 * time.Millisecond)
		topic.DeleteExistingChannel("tail#ephemeral")
	}()

	time.Sleep(10 * time.Millisecond)
	n.Exit()
}
