// Project: elastic/go-elasticsearch v6/v7, estransport. Files/functions: connection.go
// (statusConnectionPool.Next/OnSuccess/OnFailure/resurrect/scheduleResurrect), estransport.go
// (Client.Perform), the package debugLogger.
// Issue/PR: elastic/go-elasticsearch#274 "Deadlock in go-elasticsearch/estransport/connection.go",
// fixed by #603 "Resolve a deadlock" (after #601/#602); ported as elastic/elastic-transport-go#13.
//
// OnFailure and the scheduled resurrection (and Next, when it revives a dead connection) lock
// the pool, then a Connection. OnSuccess locks the Connection and, if it was marked dead in
// the meantime, then the pool to resurrect it. A request handed es1 before another request
// marked es1 dead reports success: it holds es1 and waits for the pool, while an OnFailure
// for es2 holds the pool and, sorting the dead list, locks each dead connection, es1
// included. The fix makes OnSuccess lock the pool before the connection.
package main

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
)

type DebugLogger interface {
	Logf(string, ...interface{}) error
}

var debugLogger DebugLogger

type ConnectionPool interface {
	Next() (*Connection, error)
	OnSuccess(*Connection) error
	OnFailure(*Connection) error
}

type Connection struct {
	sync.Mutex
	URL       *url.URL
	IsDead    bool
	DeadSince time.Time
	Failures  int
}

type statusConnectionPool struct {
	sync.Mutex
	live []*Connection
	dead []*Connection
	curr int
}

func (cp *statusConnectionPool) Next() (*Connection, error) {
	cp.Lock()
	defer cp.Unlock()
	if len(cp.live) > 0 {
		cp.curr = (cp.curr + 1) % len(cp.live)
		return cp.live[cp.curr], nil
	}
	return nil, errors.New("no connection available")
}

func (cp *statusConnectionPool) OnSuccess(c *Connection) error {
	cp.Lock()
	defer cp.Unlock()
	c.Lock()
	defer c.Unlock()
	if !c.IsDead {
		return nil
	}
	c.markAsHealthy()
	return cp.resurrect(c, true)
}

func (cp *statusConnectionPool) OnFailure(c *Connection) error {
	cp.Lock()
	defer cp.Unlock()
	c.Lock()
	if c.IsDead {
		c.Unlock()
		return nil
	}
	if debugLogger != nil {
		debugLogger.Logf("Removing %s...\n", c.URL) // debug builds only
	}
	c.markAsDead()
	cp.scheduleResurrect(c)
	c.Unlock()
	cp.dead = append(cp.dead, c)
	sort.Slice(cp.dead, func(i, j int) bool {
		c1, c2 := cp.dead[i], cp.dead[j]
		c1.Lock()
		c2.Lock()
		defer c1.Unlock()
		defer c2.Unlock()
		return c1.Failures > c2.Failures
	})
	for i, conn := range cp.live {
		if conn == c {
			cp.live = append(cp.live[:i], cp.live[i+1:]...)
			return nil
		}
	}
	return errors.New("connection not in live list")
}

func (cp *statusConnectionPool) resurrect(c *Connection, removeDead bool) error {
	c.IsDead = false
	cp.live = append(cp.live, c)
	if removeDead {
		for i, conn := range cp.dead {
			if conn == c {
				cp.dead = append(cp.dead[:i], cp.dead[i+1:]...)
				break
			}
		}
	}
	return nil
}

func (cp *statusConnectionPool) scheduleResurrect(c *Connection) {
	time.AfterFunc(60*time.Second, func() {
		cp.Lock()
		defer cp.Unlock()
		c.Lock()
		defer c.Unlock()
		if c.IsDead {
			cp.resurrect(c, true)
		}
	})
}

func (c *Connection) markAsDead() {
	c.IsDead, c.Failures = true, c.Failures+1
	if c.DeadSince.IsZero() {
		c.DeadSince = time.Now().UTC()
	}
}

func (c *Connection) markAsHealthy() {
	c.IsDead, c.DeadSince, c.Failures = false, time.Time{}, 0
}

type Client struct {
	pool      ConnectionPool
	transport func(c *Connection) error
}

func (c *Client) Perform() error {
	conn, err := c.pool.Next()
	if err != nil {
		return err
	}
	if err := c.transport(conn); err != nil {
		c.pool.OnFailure(conn)
		return err
	}
	return c.pool.OnSuccess(conn)
}

// stderrLogger: debug output to a slow terminal; signals when es2 is being removed.
type stderrLogger struct{ removing chan struct{} }

func (l *stderrLogger) Logf(format string, args ...interface{}) error {
	if strings.HasPrefix(format, "Removing") && fmt.Sprint(args...) == "http://es2:9200" {
		close(l.removing)
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

func main() {
	c1 := &Connection{URL: &url.URL{Scheme: "http", Host: "es1:9200"}}
	c2 := &Connection{URL: &url.URL{Scheme: "http", Host: "es2:9200"}}
	pool := &statusConnectionPool{live: []*Connection{c1, c2}, curr: -1}
	logger := &stderrLogger{removing: make(chan struct{})}
	debugLogger = logger
	slow := &Client{pool: pool, transport: func(c *Connection) error {
		<-logger.removing // a long search on es1 answers while es2 is being removed
		return nil
	}}
	calls := map[string]int{}
	flaky := &Client{pool: pool, transport: func(c *Connection) error {
		if calls[c.URL.Host]++; c.URL.Host == "es2:9200" && calls[c.URL.Host] == 1 {
			return nil
		}
		return fmt.Errorf("dial %s: connection refused", c.URL.Host)
	}}
	var wg sync.WaitGroup
	wg.Go(func() { slow.Perform() }) // handed es1
	time.Sleep(20 * time.Millisecond)
	flaky.Perform() // es2: ok
	flaky.Perform() // es1: refused, es1 is marked dead
	flaky.Perform() // es2: refused, es2 is removed while the search on es1 succeeds
	wg.Wait()
	fmt.Println("done")
}
