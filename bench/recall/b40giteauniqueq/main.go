// Project: go-gitea/gitea, modules/sync/unique_queue.go and modules/sync/status_pool.go
// (the UniqueQueue inherited from Gogs), driven the way services/pull/check.go used it
// in Gitea 1.10: AddToTaskQueue runs `go pullRequestQueue.AddFunc(pr.ID, ...)` for every
// push to a base branch and the TestPullRequests loop calls pullRequestQueue.Remove(prID).
// Issue: go-gitea/gitea#9790 (also #9667, #9759: pull request checks and pushes hang);
// fixed by PR go-gitea/gitea#9791 "Fix missing unlock in uniquequeue".
//
// AddFunc first asks Exist (a read lock on the StatusTable), then takes the table's write
// lock (line 103) and re-checks the pool. When two pushes race for the same pull request,
// both pass Exist; the loser finds the id already in the pool and returns at line 105
// without unlocking table.lock. The next Remove from the TestPullRequests goroutine then
// blocks in StatusTable.Stop (line 39), and every later Exist (RLock, line 46) blocks
// too: the whole pull-request checker is wedged. main drives the race deterministically
// through the id's String method (com.ToStr formats unknown types with %v), which parks
// the first caller between its Exist and its Lock while the second one adds the id.
package main

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// StatusTable is a table maintains true/false values.
type StatusTable struct {
	lock sync.RWMutex
	pool map[string]struct{}
}

// NewStatusTable initializes and returns a new StatusTable object.
func NewStatusTable() *StatusTable {
	return &StatusTable{pool: make(map[string]struct{})}
}

// Stop sets value of given name to false in the pool.
func (p *StatusTable) Stop(name string) {
	p.lock.Lock()
	delete(p.pool, name)
	p.lock.Unlock()
}

// IsRunning checks if value of given name is set to true in the pool.
func (p *StatusTable) IsRunning(name string) bool {
	p.lock.RLock()
	_, ok := p.pool[name]
	p.lock.RUnlock()
	return ok
}

// UniqueQueue is a queue which guarantees only one instance of same
// identity is in the line.
type UniqueQueue struct {
	table  *StatusTable
	queue  chan string
	closed chan struct{}
}

// NewUniqueQueue initializes and returns a new UniqueQueue object.
func NewUniqueQueue(queueLength int) *UniqueQueue {
	if queueLength <= 0 {
		queueLength = 100
	}
	return &UniqueQueue{
		table:  NewStatusTable(),
		queue:  make(chan string, queueLength),
		closed: make(chan struct{}),
	}
}

// toStr stands for github.com/unknwon/com.ToStr.
func toStr(value interface{}) string {
	switch v := value.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	default:
		return fmt.Sprintf("%v", v)
	}
}

// Queue returns channel of queue for retrieving instances.
func (q *UniqueQueue) Queue() <-chan string {
	return q.queue
}

// Exist returns true if there is an instance with given identity
// exists in the queue.
func (q *UniqueQueue) Exist(id interface{}) bool {
	return q.table.IsRunning(toStr(id))
}

// AddFunc adds new instance to the queue with a custom runnable function,
// the queue is blocked until the function exits.
func (q *UniqueQueue) AddFunc(id interface{}, fn func()) {
	if q.Exist(id) {
		return
	}

	idStr := toStr(id)
	q.table.lock.Lock()
	if _, ok := q.table.pool[idStr]; ok {
		return
	}
	q.table.pool[idStr] = struct{}{}
	if fn != nil {
		fn()
	}
	q.table.lock.Unlock()
	select {
	case <-q.closed:
		return
	case q.queue <- idStr:
		return
	}
}

// Remove removes instance from the queue.
func (q *UniqueQueue) Remove(id interface{}) {
	q.table.Stop(toStr(id))
}

// ---- services/pull/check.go ----

var pullRequestQueue = NewUniqueQueue(100)

// PullRequest is the part of models.PullRequest used here.
type PullRequest struct {
	ID     prID
	Status string
}

// AddToTaskQueue adds itself to pull request test task queue.
func AddToTaskQueue(pr *PullRequest) {
	go pullRequestQueue.AddFunc(pr.ID, func() {
		pr.Status = "checking"
	})
}

// TestPullRequests checks and tests untested patches of pull requests.
func TestPullRequests() {
	for prID := range pullRequestQueue.Queue() {
		pullRequestQueue.Remove(prID)
		testPatch(prID)
	}
}

// testPatch stands for the git merge test of one pull request; it takes a while.
func testPatch(prID string) {
	time.Sleep(300 * time.Millisecond)
	fmt.Println("TestPullRequests: tested", prID)
}

// ---- harness ----

// prID formats like the int64 id; its second formatting (the first caller's idStr)
// is slow, which widens the window between Exist and Lock in AddFunc.
type prID int64

var formatted atomic.Int32

func (id prID) String() string {
	if id == 42 && formatted.Add(1) == 2 {
		time.Sleep(100 * time.Millisecond)
	}
	return strconv.FormatInt(int64(id), 10)
}

func main() {
	go TestPullRequests()

	AddToTaskQueue(&PullRequest{ID: 7}) // keeps the checker busy for a while
	time.Sleep(20 * time.Millisecond)

	pr := &PullRequest{ID: 42}
	AddToTaskQueue(pr) // first push: parked between Exist and Lock
	time.Sleep(20 * time.Millisecond)
	AddToTaskQueue(pr) // second push: adds the id and queues it
	time.Sleep(600 * time.Millisecond)

	// A third push to the base branch asks the queue again.
	fmt.Println("pull request 42 queued:", pullRequestQueue.Exist(pr.ID))
}
