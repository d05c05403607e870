// Project: milvus-io/milvus (internal/util/flowgraph, DataNode 2.3.x)
// Issue: #29970 / #29104 ("deadlock on datanode's blockAll logic"),
// fixed by PR #29246 (and #29245/#29972) "Use determined order to lock in BlockAll".
//
// TimeTickedFlowGraph.Blockall() blocks every flowgraph node by taking each
// nodeCtx.blockMutex (an RWMutex whose read side is held by the node's work
// loop while it operates). The nodes live in the map fg.nodeCtx and Blockall
// simply ranged over that map. Go randomises map iteration order, so two
// concurrent Blockall callers (e.g. two SyncSegments RPCs issued by
// compaction for the same vchannel) can lock the per-node mutexes in
// different orders: caller 1 holds ddNode's blockMutex and waits for
// deleteNode's, caller 2 holds deleteNode's and waits for ddNode's -> classic
// AB-BA deadlock; auto-sync and UpdateChannelCheckpoint then hang forever.
//
// Deadlocking acquisition: nodeCtx.Block -> `nodeCtx.blockMutex.Lock()`
// (line 69), reached from the map range in Blockall (line 93). main repeats
// 8 concurrent SyncSegments for 3000 rounds so the inversion is hit every run.
package main

import (
	"fmt"
	"runtime"
	"sync"
	"time"
)

type Msg interface{}

type Node interface {
	Name() string
	IsInputNode() bool
	Operate(in []Msg) []Msg
}

type BaseNode struct{ name string }

func (n *BaseNode) Name() string           { return n.name }
func (n *BaseNode) IsInputNode() bool      { return false }
func (n *BaseNode) Operate(in []Msg) []Msg { runtime.Gosched(); return in } // process a DML batch

type InputNode struct{ BaseNode }

func (n *InputNode) IsInputNode() bool { return true }

// nodeCtx maintains the running context for a Node in flowgraph
type nodeCtx struct {
	node         Node
	inputChannel chan []Msg
	downstream   *nodeCtx
	blockMutex   sync.RWMutex
}

// work: the node worker holds the read side while operating.
func (nodeCtx *nodeCtx) work() {
	for input := range nodeCtx.inputChannel {
		nodeCtx.blockMutex.RLock()
		output := nodeCtx.node.Operate(input)
		nodeCtx.blockMutex.RUnlock()
		if nodeCtx.downstream != nil {
			nodeCtx.downstream.inputChannel <- output
		}
	}
}

func (nodeCtx *nodeCtx) Block() {
	// input node operate function will be blocking
	if !nodeCtx.node.IsInputNode() {
		startTs := time.Now()
		nodeCtx.blockMutex.Lock()
		_ = time.Since(startTs) // "flow graph wait for long time" warning
	}
}

func (nodeCtx *nodeCtx) Unblock() {
	if !nodeCtx.node.IsInputNode() {
		nodeCtx.blockMutex.Unlock()
	}
}

type TimeTickedFlowGraph struct {
	nodeCtx map[string]*nodeCtx
}

func NewTimeTickedFlowGraph() *TimeTickedFlowGraph {
	return &TimeTickedFlowGraph{nodeCtx: make(map[string]*nodeCtx)}
}

func (fg *TimeTickedFlowGraph) AddNode(node Node) {
	fg.nodeCtx[node.Name()] = &nodeCtx{node: node, inputChannel: make(chan []Msg, 16)}
}

func (fg *TimeTickedFlowGraph) Blockall() {
	for _, v := range fg.nodeCtx {
		v.Block()
	}
}

func (fg *TimeTickedFlowGraph) Unblock() {
	for _, v := range fg.nodeCtx {
		v.Unblock()
	}
}

type dataSyncService struct{ fg *TimeTickedFlowGraph }

type DataNode struct {
	flowgraphManager map[string]*dataSyncService
}

// SyncSegments is called by DataCoord after a compaction plan completes.
func (node *DataNode) SyncSegments(channelName string, planID int64) {
	ds := node.flowgraphManager[channelName]
	// block all flow graph so it's safe to remove segment
	ds.fg.Blockall()
	defer ds.fg.Unblock()
	_ = planID // channel.mergeFlushedSegments(...)
}

func main() {
	fg := NewTimeTickedFlowGraph()
	for _, name := range []string{"ddNode", "insertBufferNode", "deleteNode", "ttNode"} {
		fg.AddNode(&BaseNode{name: name})
	}
	fg.AddNode(&InputNode{BaseNode{name: "dmInputNode"}})
	pipeline := []string{"dmInputNode", "ddNode", "insertBufferNode", "deleteNode", "ttNode"}
	for i := 0; i+1 < len(pipeline); i++ { // SetEdges
		fg.nodeCtx[pipeline[i]].downstream = fg.nodeCtx[pipeline[i+1]]
	}
	for _, nc := range fg.nodeCtx {
		go nc.work()
	}
	go func() { // DML messages keep flowing through the pipeline
		for ts := 0; ; ts++ {
			fg.nodeCtx["dmInputNode"].inputChannel <- []Msg{ts}
		}
	}()
	node := &DataNode{flowgraphManager: map[string]*dataSyncService{"by-dev-dml_0_v0": {fg: fg}}}

	// Several compaction plans on the same vchannel sync concurrently, many times.
	for round := 0; round < 3000; round++ {
		start := make(chan struct{})
		var wg sync.WaitGroup
		for plan := int64(0); plan < 8; plan++ {
			wg.Add(1)
			go func(planID int64) {
				defer wg.Done()
				<-start
				node.SyncSegments("by-dev-dml_0_v0", planID)
			}(int64(round)*8 + plan)
		}
		close(start)
		wg.Wait()
	}
	fmt.Println("all SyncSegments finished")
}
