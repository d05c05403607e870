// Project: github.com/hyperledger/fabric (common/ledger/blkstorage)
// Bug: blocksItr.Close took closeMarkerLock and only then blkfilesInfoCond.L to
// broadcast, while a deliver goroutine in waitForBlock holds blkfilesInfoCond.L (after
// being woken by a commit) and calls shouldClose() -> closeMarkerLock: AB-BA through
// the Cond's L (sync.NewCond(&sync.Mutex{})).
// Fix: Close acquires blkfilesInfoCond.L first and closeMarkerLock second, the same
// order as waitForBlock.

package b20fabricblkitr_fixed

import (
	"sync"
	"testing"
	"time"
)

type blockfilesInfo struct {
	latestFileNumber   int
	latestFileSize     int
	noBlockFiles       bool
	lastPersistedBlock uint64
}

type blockfileMgr struct {
	rootDir          string
	ledgerID         string
	blockfilesInfo   *blockfilesInfo
	blkfilesInfoCond *sync.Cond
	blocks           map[uint64][]byte
}

func newBlockfileMgr(id string, last uint64) *blockfileMgr {
	mgr := &blockfileMgr{rootDir: "/var/hyperledger/production/ledgersData/chains", ledgerID: id, blocks: map[uint64][]byte{}}
	mgr.blockfilesInfo = &blockfilesInfo{lastPersistedBlock: last}
	mgr.blkfilesInfoCond = sync.NewCond(&sync.Mutex{})
	return mgr
}

func (mgr *blockfileMgr) addBlock(num uint64, data []byte) {
	mgr.blkfilesInfoCond.L.Lock()
	mgr.blocks[num] = data
	mgr.blkfilesInfoCond.L.Unlock()
	mgr.updateBlockfilesInfo(&blockfilesInfo{latestFileSize: len(data), lastPersistedBlock: num})
}

func (mgr *blockfileMgr) updateBlockfilesInfo(info *blockfilesInfo) {
	mgr.blkfilesInfoCond.L.Lock()
	defer mgr.blkfilesInfoCond.L.Unlock()
	mgr.blockfilesInfo = info
	mgr.blkfilesInfoCond.Broadcast()
}

type blockStream interface {
	nextBlockBytes() ([]byte, error)
	close() error
}

// blocksItr - an iterator for iterating over a sequence of blocks
type blocksItr struct {
	mgr                  *blockfileMgr
	maxBlockNumAvailable uint64
	blockNumToRetrieve   uint64
	stream               blockStream
	closeMarker          bool
	closeMarkerLock      *sync.Mutex
}

func newBlockItr(mgr *blockfileMgr, startBlockNum uint64, stream blockStream) *blocksItr {
	mgr.blkfilesInfoCond.L.Lock()
	defer mgr.blkfilesInfoCond.L.Unlock()
	return &blocksItr{mgr, mgr.blockfilesInfo.lastPersistedBlock, startBlockNum, stream, false, &sync.Mutex{}}
}

func (itr *blocksItr) waitForBlock(blockNum uint64) uint64 {
	itr.mgr.blkfilesInfoCond.L.Lock()
	defer itr.mgr.blkfilesInfoCond.L.Unlock()
	for itr.mgr.blockfilesInfo.lastPersistedBlock < blockNum && !itr.shouldClose() {
		itr.mgr.blkfilesInfoCond.Wait()
	}
	return itr.mgr.blockfilesInfo.lastPersistedBlock
}

func (itr *blocksItr) shouldClose() bool {
	itr.closeMarkerLock.Lock()
	defer itr.closeMarkerLock.Unlock()
	return itr.closeMarker
}

// Next moves the cursor to next block and returns true iff the iterator is not exhausted
func (itr *blocksItr) Next() ([]byte, error) {
	if itr.maxBlockNumAvailable < itr.blockNumToRetrieve {
		itr.maxBlockNumAvailable = itr.waitForBlock(itr.blockNumToRetrieve)
	}
	itr.closeMarkerLock.Lock()
	defer itr.closeMarkerLock.Unlock()
	if itr.closeMarker {
		return nil, nil
	}
	b, err := itr.stream.nextBlockBytes()
	if err != nil {
		return nil, err
	}
	itr.blockNumToRetrieve++
	return b, nil
}

// Close releases any resources held by the iterator
func (itr *blocksItr) Close() {
	itr.mgr.blkfilesInfoCond.L.Lock()
	defer itr.mgr.blkfilesInfoCond.L.Unlock()
	itr.closeMarkerLock.Lock()
	defer itr.closeMarkerLock.Unlock()
	itr.closeMarker = true
	itr.mgr.blkfilesInfoCond.Broadcast()
	if itr.stream != nil {
		itr.stream.close()
	}
}

// fileStream reads blocks from a block file; closing the file takes a while.
type fileStream struct{ closing chan struct{} }

func (s *fileStream) nextBlockBytes() ([]byte, error) { return []byte("block"), nil }

func (s *fileStream) close() error {
	close(s.closing)
	time.Sleep(100 * time.Millisecond)
	return nil
}

func TestDeliverIteratorCloseWhileCommitting(t *testing.T) {
	mgr := newBlockfileMgr("mychannel", 5)
	stream := &fileStream{closing: make(chan struct{})}
	itr := newBlockItr(mgr, 10, stream)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // deliver service: waits for block 10
		defer wg.Done()
		_, _ = itr.Next()
	}()
	time.Sleep(50 * time.Millisecond) // Next is parked in blkfilesInfoCond.Wait
	go func() {                       // the client's stream ended
		defer wg.Done()
		itr.Close()
	}()
	<-stream.closing                  // Close holds closeMarkerLock
	mgr.addBlock(6, []byte("block6")) // committer wakes the deliver goroutine
	wg.Wait()
}
