// Project: nsq (nsqd/lookup.go, nsqd/topic.go, nsqd/nsqd.go) with github.com/bitly/go-notify, early 2013
// Issue: nsqio/nsq#123 "unlucky timing of notify.Post can cause exit deadlock"
//
// FIXED TWIN: go-notify's Post read-locks (line 54) and sends to every
// registered channel (line 61); on exit, lookupLoop now keeps draining its notify
// channels while it closes its lookupd connections and unregisters with notify.Stop
// (line 34, called at line 137), so a post from a deleted ephemeral channel
// (line 91) during shutdown completes, Stop gets the write lock and Exit's
// waitGroup.Wait (line 151) returns. (This models the fix of nsq#123: lookupLoop
// must not stop consuming notifications while a Post may still hold the read lock.)
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
	// Keep draining the notify channels until Stop closes them, so a Post
	// already in flight completes and lets go of the read lock.
	go func() {
		for range notifyChannelChan {
		}
	}()
	go func() {
		for range notifyTopicChan {
		}
	}()
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
