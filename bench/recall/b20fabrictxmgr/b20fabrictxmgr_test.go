// Project: github.com/hyperledger/fabric (core/ledger/kvledger/txmgmt/txmgr)
// Bug: a TxSimulator holds commitRWLock.RLock for the whole endorsement simulation;
// while simulating, the chaincode-definition lookup opened a second QueryExecutor via
// NewQueryExecutor, i.e. a recursive commitRWLock.RLock in the same goroutine. When
// the committer is already waiting in commitRWLock.Lock, the second RLock blocks
// behind it and the peer stops both endorsing and committing.
// Fix: add NewQueryExecutorNoLock and use it for lookups done inside a simulation.

package b20fabrictxmgr

import (
	"sync"
	"testing"
	"time"
)

type VersionedValue struct {
	Value    []byte
	BlockNum uint64
	TxNum    uint64
}

type LockBasedTxMgr struct {
	ledgerid       string
	db             map[string]VersionedValue
	commitRWLock   sync.RWMutex
	oldBlockCommit sync.Mutex
	lastCommitted  uint64
	pending        map[string][]byte
}

type queryExecutor struct {
	txmgr       *LockBasedTxMgr
	txid        string
	doneInvoked bool
	unlockOnce  bool
}

func newQueryExecutor(txmgr *LockBasedTxMgr, txid string, performLock bool) *queryExecutor {
	return &queryExecutor{txmgr: txmgr, txid: txid, unlockOnce: performLock}
}

func (q *queryExecutor) GetState(ns, key string) ([]byte, error) {
	return q.txmgr.db[ns+"\x00"+key].Value, nil
}

func (q *queryExecutor) Done() {
	if q.doneInvoked {
		return
	}
	q.doneInvoked = true
	if q.unlockOnce {
		q.txmgr.commitRWLock.RUnlock()
	}
}

type txSimulator struct {
	*queryExecutor
	writes map[string][]byte
}

func (s *txSimulator) SetState(ns, key string, value []byte) error {
	s.writes[ns+"\x00"+key] = value
	return nil
}

// NewQueryExecutor implements method in interface `txmgmt.TxMgr`
func (txmgr *LockBasedTxMgr) NewQueryExecutor(txid string) (*queryExecutor, error) {
	qe := newQueryExecutor(txmgr, txid, true)
	txmgr.commitRWLock.RLock()
	return qe, nil
}

// NewTxSimulator implements method in interface `txmgmt.TxMgr`
func (txmgr *LockBasedTxMgr) NewTxSimulator(txid string) (*txSimulator, error) {
	s := &txSimulator{queryExecutor: newQueryExecutor(txmgr, txid, true), writes: map[string][]byte{}}
	txmgr.commitRWLock.RLock()
	return s, nil
}

// Commit implements method in interface `txmgmt.TxMgr`
func (txmgr *LockBasedTxMgr) Commit(blockNum uint64, updates map[string][]byte) error {
	txmgr.oldBlockCommit.Lock()
	defer txmgr.oldBlockCommit.Unlock()
	txmgr.commitRWLock.Lock()
	defer txmgr.commitRWLock.Unlock()
	for k, v := range updates {
		txmgr.db[k] = VersionedValue{Value: v, BlockNum: blockNum}
	}
	txmgr.lastCommitted = blockNum
	return nil
}

// Lifecycle answers chaincode definition queries for the endorser.
type Lifecycle struct {
	ledger *LockBasedTxMgr
}

func (l *Lifecycle) ChaincodeDefinition(channelID, name string) ([]byte, error) {
	qe, err := l.ledger.NewQueryExecutor("")
	if err != nil {
		return nil, err
	}
	defer qe.Done()
	return qe.GetState("lscc", name)
}

type Endorser struct {
	ledger    *LockBasedTxMgr
	lifecycle *Lifecycle
	simulated chan struct{}
}

func (e *Endorser) SimulateProposal(txid, chaincode string, args [][]byte) (map[string][]byte, error) {
	txsim, err := e.ledger.NewTxSimulator(txid)
	if err != nil {
		return nil, err
	}
	defer txsim.Done()
	if e.simulated != nil {
		close(e.simulated)
	}
	time.Sleep(100 * time.Millisecond) // chaincode container runs Invoke
	if _, err := e.lifecycle.ChaincodeDefinition("mychannel", chaincode); err != nil {
		return nil, err
	}
	for i, a := range args {
		_ = txsim.SetState(chaincode, string(rune('a'+i)), a)
	}
	return txsim.writes, nil
}

func TestEndorseWhileCommitting(t *testing.T) {
	txmgr := &LockBasedTxMgr{ledgerid: "mychannel", db: map[string]VersionedValue{
		"lscc\x00mycc": {Value: []byte("mycc:1.0")},
	}}
	e := &Endorser{ledger: txmgr, lifecycle: &Lifecycle{ledger: txmgr}, simulated: make(chan struct{})}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, _ = e.SimulateProposal("tx1", "mycc", [][]byte{[]byte("100")})
	}()
	<-e.simulated // the simulation holds commitRWLock.RLock
	go func() {
		defer wg.Done()
		_ = txmgr.Commit(7, map[string][]byte{"mycc\x00a": []byte("90")})
	}()
	wg.Wait()
}
