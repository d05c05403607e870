// Project: traefik/traefik (server ConfigurationWatcher), as remembered.
// Bug: preLoadConfiguration held the watcher mutex while forwarding a provider
// message to the listener goroutine in a select without default (other case:
// stopCh). The listener, having taken the previous message, applies it in
// loadMessage, which needs the same mutex; Stop() would close stopCh but also
// takes the mutex, so nothing unblocks the send and config reloads hang.
package main

import (
	"context"
	"sync"
	"time"
)

type Configuration struct{ Routers map[string]string }

type Listener func(map[string]*Configuration)

type Message struct {
	ProviderName  string
	Configuration *Configuration
}

type ConfigurationWatcher struct {
	mu                         sync.Mutex
	currentConfigurations      map[string]*Configuration
	configurationChan          chan Message
	configurationValidatedChan chan Message
	stopCh                     chan struct{}
	listeners                  []Listener
}

func NewConfigurationWatcher(ctx context.Context) *ConfigurationWatcher {
	c := &ConfigurationWatcher{currentConfigurations: make(map[string]*Configuration),
		configurationChan: make(chan Message, 10), configurationValidatedChan: make(chan Message),
		stopCh: make(chan struct{})}
	go c.receiveConfigurations(ctx)
	go c.listenConfigurations(ctx)
	return c
}

func (c *ConfigurationWatcher) AddListener(l Listener) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listeners = append(c.listeners, l)
}

func (c *ConfigurationWatcher) receiveConfigurations(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case msg := <-c.configurationChan:
			c.preLoadConfiguration(msg)
		}
	}
}

func (c *ConfigurationWatcher) preLoadConfiguration(msg Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case c.configurationValidatedChan <- msg:
	case <-c.stopCh:
	}
}

func (c *ConfigurationWatcher) listenConfigurations(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case msg := <-c.configurationValidatedChan:
			c.loadMessage(msg)
		}
	}
}

func (c *ConfigurationWatcher) loadMessage(msg Message) {
	c.mu.Lock()
	c.currentConfigurations[msg.ProviderName] = msg.Configuration
	conf := make(map[string]*Configuration, len(c.currentConfigurations))
	for k, v := range c.currentConfigurations {
		conf[k] = v
	}
	listeners := append([]Listener(nil), c.listeners...)
	c.mu.Unlock()
	for _, l := range listeners {
		l(conf)
	}
}

func (c *ConfigurationWatcher) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.stopCh)
}

func main() {
	ctx := context.Background()
	w := NewConfigurationWatcher(ctx)
	w.AddListener(func(map[string]*Configuration) { time.Sleep(time.Millisecond) })
	go func() {
		for {
			w.configurationChan <- Message{ProviderName: "docker", Configuration: &Configuration{}}
		}
	}()
	time.Sleep(time.Second)
	w.Stop()
}
