// Project: nsqio/nsq (nsqd/client_v2.go, protocol_v2.go)
// Bug: clientV2.String() was changed to include the identify metadata
//
//	(client_id / hostname) and read it under c.metaLock. Identify() logs
//	"[%s] IDENTIFY: ..." with the client as the %s operand while it holds
//	c.metaLock for writing, so fmt calls c.String() -> c.metaLock.RLock()
//	on the same goroutine and the client's IOLoop hangs.
//
// Fix: String() returns the immutable remote address and takes no lock.
package main

import (
	"fmt"
	"log"
	"net"
	"sync"
	"time"
)

type lg int

const (
	LOG_DEBUG lg = iota
	LOG_INFO
	LOG_WARN
)

type identifyDataV2 struct {
	ClientID           string `json:"client_id"`
	Hostname           string `json:"hostname"`
	HeartbeatInterval  int    `json:"heartbeat_interval"`
	OutputBufferSize   int    `json:"output_buffer_size"`
	FeatureNegotiation bool   `json:"feature_negotiation"`
	UserAgent          string `json:"user_agent"`
	MsgTimeout         int    `json:"msg_timeout"`
}

type NSQD struct {
	logLevel lg
	logger   *log.Logger
}

func (n *NSQD) logf(level lg, f string, args ...interface{}) {
	if level < n.logLevel {
		return
	}
	n.logger.Printf(f, args...)
}

type clientV2 struct {
	ID        int64
	nsqd      *NSQD
	UserAgent string
	net.Conn

	metaLock          sync.RWMutex
	ClientID          string
	Hostname          string
	HeartbeatInterval time.Duration
	OutputBufferSize  int
	MsgTimeout        time.Duration

	ConnectTime time.Time
	addr        string
}

func newClientV2(id int64, addr string, nsqd *NSQD) *clientV2 {
	return &clientV2{ID: id, nsqd: nsqd, addr: addr, ConnectTime: time.Now(),
		ClientID: addr, Hostname: addr, HeartbeatInterval: 30 * time.Second,
		OutputBufferSize: 16 * 1024}
}

func (c *clientV2) String() string {
	c.metaLock.RLock() // deadlock: Identify holds metaLock for writing
	defer c.metaLock.RUnlock()
	return fmt.Sprintf("%s(%s/%s)", c.addr, c.ClientID, c.Hostname)
}

func (c *clientV2) Identify(data identifyDataV2) error {
	c.metaLock.Lock()
	defer c.metaLock.Unlock()

	c.ClientID = data.ClientID
	c.Hostname = data.Hostname
	c.UserAgent = data.UserAgent
	if err := c.setHeartbeatInterval(data.HeartbeatInterval); err != nil {
		return err
	}
	c.OutputBufferSize = data.OutputBufferSize
	if data.MsgTimeout > 0 {
		c.MsgTimeout = time.Duration(data.MsgTimeout) * time.Millisecond
	}
	c.nsqd.logf(LOG_INFO, "[%s] IDENTIFY: %+v", c, data) // BUG: formats c under metaLock
	return nil
}

func (c *clientV2) setHeartbeatInterval(desiredInterval int) error {
	switch {
	case desiredInterval == -1:
		c.HeartbeatInterval = 0
	case desiredInterval == 0:
	case desiredInterval >= 1000 && desiredInterval <= 60000:
		c.HeartbeatInterval = time.Duration(desiredInterval) * time.Millisecond
	default:
		return fmt.Errorf("heartbeat interval (%d) is invalid", desiredInterval)
	}
	return nil
}

type protocolV2 struct {
	nsqd *NSQD
}

func (p *protocolV2) IDENTIFY(client *clientV2, data identifyDataV2) ([]byte, error) {
	if err := client.Identify(data); err != nil {
		return nil, fmt.Errorf("E_BAD_BODY IDENTIFY %s", err)
	}
	return []byte("OK"), nil
}

func (p *protocolV2) IOLoop(client *clientV2, cmds <-chan identifyDataV2, done chan<- struct{}) {
	defer close(done)
	for data := range cmds {
		resp, err := p.IDENTIFY(client, data)
		if err != nil {
			p.nsqd.logf(LOG_WARN, "PROTOCOL(V2): [%s] - %s", client, err)
			return
		}
		p.nsqd.logf(LOG_DEBUG, "PROTOCOL(V2): [%s] response %s", client, resp)
	}
}

func main() {
	n := &NSQD{logLevel: LOG_INFO, logger: log.Default()}
	p := &protocolV2{nsqd: n}
	client := newClientV2(1, "127.0.0.1:52044", n)

	cmds := make(chan identifyDataV2, 1)
	done := make(chan struct{})
	go p.IOLoop(client, cmds, done)
	cmds <- identifyDataV2{ClientID: "consumer-7", Hostname: "worker-7.internal",
		HeartbeatInterval: 15000, OutputBufferSize: 32 * 1024, FeatureNegotiation: true,
		UserAgent: "go-nsq/1.1.0", MsgTimeout: 60000}
	close(cmds)
	<-done
	fmt.Println("client:", client)
}
