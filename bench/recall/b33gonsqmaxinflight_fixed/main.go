// Project: nsqio/go-nsq (reader.go, the NSQ Go client's consumer; early 2014)
// Issue: PR #29 "Potential deadlock on startup" (reported in
// https://gist.github.com/rtecco/9945119 and by kjk/shurcooL).
//
// Bug: Reader embeds a sync.RWMutex. The per-connection rdyLoop computes the
// RDY count with q.ConnectionMaxInFlight(), which takes q.RLock (line 102)
// and, while holding it, calls the exported q.MaxInFlight(), which takes
// q.RLock again (line 115). On startup the application calls
// q.ConnectToLookupd, which takes q.Lock (line 125) to append the lookupd
// address. If that Lock is requested between the two read locks, the writer
// waits for rdyLoop's first read lock and rdyLoop's second RLock queues
// behind the writer: the connection never sends RDY and ConnectToLookupd never
// returns.
//
// Fix (#29): ConnectionMaxInFlight reads MaxInFlight() before taking the
// reader's read lock (the post-fix reader also gave maxInFlight its own
// maxInFlightMutex).
//
// The nsqd connection is an in-memory stand-in (no sockets); queryLookupd's
// HTTP request is omitted. main() holds rdyLoop inside ConnectionMaxInFlight
// with a test hook until ConnectToLookupd is queued on the write lock.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// ErrLookupdAddressExists is returned when ConnectToLookupd is called with an
// address that was already added.
var ErrLookupdAddressExists = errors.New("lookupd address already exists")

type nsqConn struct {
	addr         string
	rdyCount     int64
	lastRdyCount int64
	maxRdyCount  int64
	stopFlag     int32
	readyChan    chan int
	exitChan     chan int
	w            bytes.Buffer
}

func (c *nsqConn) String() string { return c.addr }

func (c *nsqConn) sendCommand(cmd string) error {
	_, err := c.w.WriteString(cmd + "\n")
	return err
}

// tryUpdateRDY asks the connection's rdyLoop to re-evaluate its RDY count.
func (c *nsqConn) tryUpdateRDY() {
	select {
	case c.readyChan <- 1:
	default:
	}
}

// Reader is a high-level type to consume from NSQ.
type Reader struct {
	sync.RWMutex

	TopicName   string
	ChannelName string

	maxInFlight       int
	totalRdyCount     int64
	nsqConnections    map[string]*nsqConn
	lookupdHTTPAddrs  []string
	lookupdQueryIndex int
	VerboseLogging    bool
	stopFlag          int32
	rdyLoopsWG        sync.WaitGroup
}

// NewReader creates a new instance of Reader for the specified topic/channel.
func NewReader(topic string, channel string) (*Reader, error) {
	q := &Reader{
		TopicName:      topic,
		ChannelName:    channel,
		nsqConnections: make(map[string]*nsqConn),
		maxInFlight:    1,
	}
	return q, nil
}

// testHookConnectionMaxInFlight is called by ConnectionMaxInFlight once it
// holds the reader's read lock (tests only).
var testHookConnectionMaxInFlight func()

// ConnectionMaxInFlight calculates the per-connection max-in-flight count.
//
// This may change dynamically based on the number of connections to nsqd the Reader
// is responsible for.
func (q *Reader) ConnectionMaxInFlight() int64 {
	b := float64(q.MaxInFlight())
	q.RLock()
	if testHookConnectionMaxInFlight != nil {
		testHookConnectionMaxInFlight()
	}
	s := b / float64(len(q.nsqConnections))
	q.RUnlock()
	return int64(math.Min(math.Max(1, s), b))
}

// MaxInFlight returns the configured maximum number of messages to allow in-flight.
func (q *Reader) MaxInFlight() int {
	q.RLock()
	defer q.RUnlock()
	return q.maxInFlight
}

// ConnectToLookupd adds a nsqlookupd address to the list for this Reader instance.
//
// If it is the first to be added, it initiates an HTTP request to discover nsqd
// producers for the configured topic.
func (q *Reader) ConnectToLookupd(addr string) error {
	q.Lock()
	for _, x := range q.lookupdHTTPAddrs {
		if x == addr {
			q.Unlock()
			return ErrLookupdAddressExists
		}
	}
	q.lookupdHTTPAddrs = append(q.lookupdHTTPAddrs, addr)
	numLookupd := len(q.lookupdHTTPAddrs)
	q.Unlock()

	// if this is the first one, kick off the go loop
	if numLookupd == 1 {
		q.queryLookupd()
	}
	return nil
}

// make an HTTP req to the /lookup endpoint of one of the
// configured nsqlookupd instances to discover which nsqd provide
// the topic we are consuming.
func (q *Reader) queryLookupd() {
	q.RLock()
	addr := q.lookupdHTTPAddrs[q.lookupdQueryIndex]
	num := len(q.lookupdHTTPAddrs)
	q.RUnlock()
	q.lookupdQueryIndex = (q.lookupdQueryIndex + 1) % num
	log.Printf("LOOKUPD: querying http://%s/lookup?topic=%s", addr, q.TopicName)
}

// ConnectToNSQ takes a nsqd address to connect directly to (the IDENTIFY and
// SUB handshake are elided).
func (q *Reader) ConnectToNSQ(addr string) error {
	connection := &nsqConn{
		addr:        addr,
		maxRdyCount: 2500,
		readyChan:   make(chan int, 1),
		exitChan:    make(chan int),
	}

	q.Lock()
	q.nsqConnections[connection.String()] = connection
	// signal to existing connections to lower their RDY count
	for _, c := range q.nsqConnections {
		c.tryUpdateRDY()
	}
	q.Unlock()

	q.rdyLoopsWG.Add(1)
	go q.rdyLoop(connection)

	// prime RDY state
	connection.tryUpdateRDY()
	return nil
}

func (q *Reader) rdyLoop(c *nsqConn) {
	defer q.rdyLoopsWG.Done()
	readyChan := c.readyChan
	for {
		select {
		case <-readyChan:
			// send ready immediately
			remain := atomic.LoadInt64(&c.rdyCount)
			lastRdyCount := atomic.LoadInt64(&c.lastRdyCount)
			count := q.ConnectionMaxInFlight()
			// refill when at 1, or at 25%, or if connections have changed and we have too many RDY
			if remain <= 1 || remain < (lastRdyCount/4) || (count > 0 && count < remain) {
				if q.VerboseLogging {
					log.Printf("[%s] sending RDY %d (%d remain from last RDY %d)", c, count, remain, lastRdyCount)
				}
				q.updateRDY(c, count)
			}
		case <-c.exitChan:
			goto exit
		}
	}

exit:
	log.Printf("[%s] rdyLoop exiting", c)
}

func (q *Reader) updateRDY(c *nsqConn, count int64) error {
	if atomic.LoadInt32(&c.stopFlag) != 0 {
		return nil
	}

	// never exceed the nsqd's configured max RDY count
	if count > c.maxRdyCount {
		count = c.maxRdyCount
	}

	atomic.AddInt64(&q.totalRdyCount, count-atomic.LoadInt64(&c.rdyCount))
	atomic.StoreInt64(&c.rdyCount, count)
	atomic.StoreInt64(&c.lastRdyCount, count)
	return c.sendCommand(fmt.Sprintf("RDY %d", count))
}

// Stop will gracefully stop the Reader.
func (q *Reader) Stop() {
	if !atomic.CompareAndSwapInt32(&q.stopFlag, 0, 1) {
		return
	}
	q.RLock()
	for _, c := range q.nsqConnections {
		atomic.StoreInt32(&c.stopFlag, 1)
		close(c.exitChan)
	}
	q.RUnlock()
	q.rdyLoopsWG.Wait()
}

func main() {
	q, _ := NewReader("events", "archive")

	inConnMaxInFlight := make(chan struct{})
	lookupdQueued := make(chan struct{})
	var once sync.Once
	testHookConnectionMaxInFlight = func() {
		once.Do(func() {
			close(inConnMaxInFlight)
			<-lookupdQueued
		})
	}

	// The application connects to a local nsqd first ...
	if err := q.ConnectToNSQ("127.0.0.1:4150"); err != nil {
		log.Fatal(err)
	}
	<-inConnMaxInFlight

	// ... and then to nsqlookupd.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := q.ConnectToLookupd("127.0.0.1:4161"); err != nil {
			log.Print(err)
		}
	}()
	time.Sleep(20 * time.Millisecond) // ConnectToLookupd queues on q.Lock
	close(lookupdQueued)
	wg.Wait()

	q.Stop()
	fmt.Println("done, RDY", atomic.LoadInt64(&q.totalRdyCount))
}
