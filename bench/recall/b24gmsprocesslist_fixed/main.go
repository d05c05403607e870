// Project: dolthub/go-mysql-server (processlist.go, sql/process.go)
// Bug: ProcessList.Kill looks the connection up under pl.mu.RLock and calls the
// process's Kill func while still holding it; BeginQuery installs a Kill func
// that cancels the query context and calls pl.EndQuery, which takes pl.mu.Lock.
// The read lock is upgraded on the same goroutine -> KILL QUERY hangs forever.
// Fix: copy the Kill func under the read lock, release it, then invoke it.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"
)

var ErrConnectionNotFound = errors.New("connection not found")

type TableProgress struct {
	Name      string
	Done      int64
	Total     int64
	StartedAt time.Time
}

func (p TableProgress) String() string {
	return fmt.Sprintf("%s (%d/%d)", p.Name, p.Done, p.Total)
}

type Process struct {
	Connection uint32
	QueryPid   uint64
	Host       string
	Database   string
	User       string
	Query      string
	Command    string
	StartedAt  time.Time
	Progress   map[string]TableProgress
	Kill       context.CancelFunc
}

func (p *Process) Seconds() uint64 { return uint64(time.Since(p.StartedAt) / time.Second) }

type Context struct {
	context.Context
	connID   uint32
	queryPid uint64
	query    string
}

type ProcessList struct {
	mu         sync.RWMutex
	procs      map[uint32]*Process
	byQueryPid map[uint64]uint32
	nextPid    uint64
}

func NewProcessList() *ProcessList {
	return &ProcessList{procs: map[uint32]*Process{}, byQueryPid: map[uint64]uint32{}}
}

func (pl *ProcessList) AddConnection(id uint32, addr, user string) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.procs[id] = &Process{Connection: id, Host: addr, User: user, Command: "Connect", StartedAt: time.Now()}
}

func (pl *ProcessList) BeginQuery(ctx context.Context, connID uint32, query string) (*Context, error) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	p, ok := pl.procs[connID]
	if !ok {
		return nil, ErrConnectionNotFound
	}
	pl.nextPid++
	newCtx, cancel := context.WithCancel(ctx)
	qctx := &Context{Context: newCtx, connID: connID, queryPid: pl.nextPid, query: query}
	p.Command, p.Query, p.QueryPid, p.StartedAt = "Query", query, pl.nextPid, time.Now()
	p.Progress = map[string]TableProgress{}
	p.Kill = func() {
		cancel()
		pl.EndQuery(qctx)
	}
	pl.byQueryPid[pl.nextPid] = connID
	return qctx, nil
}

func (pl *ProcessList) UpdateTableProgress(pid uint64, name string, delta int64) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	p, ok := pl.procs[pl.byQueryPid[pid]]
	if !ok {
		return
	}
	tp := p.Progress[name]
	tp.Name, tp.Done = name, tp.Done+delta
	p.Progress[name] = tp
}

func (pl *ProcessList) EndQuery(ctx *Context) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	delete(pl.byQueryPid, ctx.queryPid)
	if p, ok := pl.procs[ctx.connID]; ok && p.QueryPid == ctx.queryPid {
		p.Command, p.Query, p.QueryPid, p.Kill = "Sleep", "", 0, nil
		p.Progress = nil
	}
}

func (pl *ProcessList) Kill(connID uint32) {
	pl.mu.RLock()
	p, ok := pl.procs[connID]
	if !ok || p.Kill == nil {
		pl.mu.RUnlock()
		return
	}
	log.Printf("kill query: id %d (%s)", p.QueryPid, p.Query)
	kill := p.Kill
	pl.mu.RUnlock()
	kill()
}

func (pl *ProcessList) Processes() []Process {
	pl.mu.RLock()
	defer pl.mu.RUnlock()
	res := make([]Process, 0, len(pl.procs))
	for _, p := range pl.procs {
		cp := *p
		cp.Progress = make(map[string]TableProgress, len(p.Progress))
		for k, v := range p.Progress {
			cp.Progress[k] = v
		}
		res = append(res, cp)
	}
	return res
}

func runQuery(ctx *Context, pl *ProcessList, started chan<- struct{}) error {
	close(started)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		pl.UpdateTableProgress(ctx.queryPid, "orders", 100)
		time.Sleep(5 * time.Millisecond)
	}
}

func main() {
	pl := NewProcessList()
	pl.AddConnection(1, "127.0.0.1:51234", "root")
	pl.AddConnection(2, "127.0.0.1:51240", "root")
	qctx, err := pl.BeginQuery(context.Background(), 1, "SELECT SLEEP(100) FROM orders")
	if err != nil {
		log.Fatal(err)
	}
	started := make(chan struct{})
	errCh := make(chan error, 1)
	go func() { errCh <- runQuery(qctx, pl, started) }()
	<-started
	time.Sleep(20 * time.Millisecond)
	pl.Kill(1)
	fmt.Println("query finished:", <-errCh)
	for _, p := range pl.Processes() {
		fmt.Printf("%d %s %s %v\n", p.Connection, p.User, p.Command, p.Seconds())
	}
}
