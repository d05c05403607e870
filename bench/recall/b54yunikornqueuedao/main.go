// Project: apache/incubator-yunikorn-core (YuniKorn scheduler core), 0.11 development, Aug 2021.
// Files/functions: pkg/scheduler/objects/queue.go (Queue.GetPartitionQueueDAOInfo, GetCopyOfChildren,
// GetMaxResource, GetGuaranteedResource, GetAllocatedResource, incPendingResource),
// pkg/scheduler/objects/application.go (Application.AddAllocationAsk), pkg/scheduler/partition.go
// (PartitionContext.GetPartitionQueues), pkg/webservice/handlers.go (getPartitionQueues).
// Issue/PR: YUNIKORN-793, apache/incubator-yunikorn-core#299 "YUNIKORN-793 fix deadlock caused by
// listing queues with scheduling pending pods".
//
// The REST call that lists a partition's queues builds the DAO recursively: GetPartitionQueueDAOInfo
// read-locks the queue for the whole function and then calls the queue's own public getters
// (GetCopyOfChildren, GetMaxResource, GetGuaranteedResource, GetAllocatedResource), each of which
// read-locks the same RWMutex again, after recursing into all children. A new allocation ask in any
// leaf queue calls incPendingResource, which walks up the hierarchy and write-locks every ancestor,
// the root included. When that writer queues on the root while the REST goroutine holds the root's
// read lock (the recursion over a large queue tree takes a while), the nested RLock in the getters
// waits behind the writer and the writer waits for the outer read lock: the web service and every
// ask update that touches the root hang. The fix builds the children first, takes the read lock
// once and reads the fields directly ("we have held the read lock so following method should not
// take lock again").
package main

import (
	"fmt"
	"strconv"
	"sync"
	"time"
)

type Resource struct{ Memory, Vcore int64 }

func (r Resource) DAOString() string { return fmt.Sprintf("[memory:%d vcore:%d]", r.Memory, r.Vcore) }

type PartitionQueueDAOInfo struct {
	QueueName, Partition, Parent                       string
	MaxResource, GuaranteedResource, AllocatedResource string
	IsLeaf                                             bool
	Children                                           []PartitionQueueDAOInfo
}

type Queue struct {
	sync.RWMutex
	QueuePath          string
	parent             *Queue
	children           map[string]*Queue
	isLeaf             bool
	maxResource        Resource
	guaranteedResource Resource
	allocatedResource  Resource
	pending            Resource
}

func (sq *Queue) GetCopyOfChildren() map[string]*Queue {
	sq.RLock()
	defer sq.RUnlock()
	children := make(map[string]*Queue, len(sq.children))
	for k, v := range sq.children {
		children[k] = v
	}
	return children
}

func (sq *Queue) GetMaxResource() Resource {
	sq.RLock()
	defer sq.RUnlock()
	return sq.maxResource
}

func (sq *Queue) GetGuaranteedResource() Resource {
	sq.RLock()
	defer sq.RUnlock()
	return sq.guaranteedResource
}

func (sq *Queue) GetAllocatedResource() Resource {
	sq.RLock()
	defer sq.RUnlock()
	return sq.allocatedResource
}

// GetPartitionQueueDAOInfo returns the queue hierarchy as an object for a REST call.
func (sq *Queue) GetPartitionQueueDAOInfo() PartitionQueueDAOInfo {
	sq.RLock()
	defer sq.RUnlock()

	queueInfo := PartitionQueueDAOInfo{}
	for _, child := range sq.GetCopyOfChildren() {
		queueInfo.Children = append(queueInfo.Children, child.GetPartitionQueueDAOInfo())
	}
	queueInfo.QueueName = sq.QueuePath
	queueInfo.MaxResource = sq.GetMaxResource().DAOString()
	queueInfo.GuaranteedResource = sq.GetGuaranteedResource().DAOString()
	queueInfo.AllocatedResource = sq.GetAllocatedResource().DAOString()
	queueInfo.IsLeaf = sq.isLeaf
	if sq.parent != nil {
		queueInfo.Parent = sq.parent.QueuePath
	}
	return queueInfo
}

// incPendingResource updates the pending resources of this queue and all its parents.
func (sq *Queue) incPendingResource(delta Resource) {
	// update the parent
	if sq.parent != nil {
		sq.parent.incPendingResource(delta)
	}
	// update this queue
	sq.Lock()
	defer sq.Unlock()
	sq.pending.Memory += delta.Memory
	sq.pending.Vcore += delta.Vcore
}

type AllocationAsk struct {
	AllocationKey     string
	AllocatedResource Resource
}

type Application struct {
	sync.RWMutex
	ApplicationID string
	queue         *Queue
	requests      map[string]*AllocationAsk
}

func (sa *Application) AddAllocationAsk(ask *AllocationAsk) {
	sa.Lock()
	defer sa.Unlock()
	sa.requests[ask.AllocationKey] = ask
	sa.queue.incPendingResource(ask.AllocatedResource)
}

type PartitionContext struct {
	sync.RWMutex
	Name string
	root *Queue
}

func (pc *PartitionContext) GetPartitionQueues() PartitionQueueDAOInfo {
	info := pc.root.GetPartitionQueueDAOInfo()
	info.Partition = pc.Name
	return info
}

// getPartitionQueues is the GET /ws/v1/partition/{partition}/queues handler.
func getPartitionQueues(pc *PartitionContext) int {
	return len(pc.GetPartitionQueues().Children)
}

func main() {
	root := &Queue{QueuePath: "root", children: map[string]*Queue{}, maxResource: Resource{1 << 40, 1 << 20}}
	var leaf *Queue
	for i := 0; i < 20000; i++ { // one managed queue per tenant namespace
		path := "root.tenant-" + strconv.Itoa(i)
		leaf = &Queue{QueuePath: path, parent: root, isLeaf: true, children: map[string]*Queue{}}
		root.children[path] = leaf
	}
	pc := &PartitionContext{Name: "default", root: root}
	app := &Application{ApplicationID: "spark-pi", queue: leaf, requests: map[string]*AllocationAsk{}}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // REST client polling the queue view
		defer wg.Done()
		fmt.Println("queues listed:", getPartitionQueues(pc))
	}()
	go func() { // RM event handler: the shim adds pending pods as asks
		defer wg.Done()
		for i := 0; i < 50; i++ {
			time.Sleep(time.Millisecond)
			app.AddAllocationAsk(&AllocationAsk{AllocationKey: "executor-" + strconv.Itoa(i), AllocatedResource: Resource{4096, 1000}})
		}
	}()
	wg.Wait()
}
