// Project: tendermint/tendermint (rpc/core/consensus.go Validators and rpc/core/pipe.go Consensus, consensus/state.go ConsensusState.GetState, handleMsg and finalizeCommit, state/execution.go ApplyBlock and execBlockOnProxyApp, abci/client/local_client.go), v0.27 to v0.32, January 2019 (reported with go-deadlock in PR #3148, issue #3161 "rpc: don't lock consensus state"; fixed by computing the latest height from the block store, latestUncommittedHeight, before v0.33; fix PR approximate).
// Bug: /validators (and /consensus_params, /status) called consensusState.GetState(), which read-locks cs.mtx, only to learn the latest height. An in-process ABCI app (gallactic) asked the local RPC client for the validator set from EndBlock, but EndBlock runs inside finalizeCommit while the consensus goroutine already holds cs.mtx for writing, so the consensus goroutine blocks on its own lock and the chain halts. The fix derives the height from blockStore.Height() and no longer touches the consensus lock.
package b111tmrpcvalidatorsfixed

import (
	"fmt"
	"sync"
	"testing"
)

type Validator struct {
	Address     string
	VotingPower int64
}

type ValidatorSet struct{ Validators []*Validator }

// State is sm.State.
type State struct {
	LastBlockHeight int64
	Validators      *ValidatorSet
}

func (s State) Copy() State { return s }

type Block struct{ Height int64 }

type stateStore struct{ vals map[int64]*ValidatorSet }

func LoadValidators(db *stateStore, height int64) (*ValidatorSet, error) {
	if v, ok := db.vals[height]; ok {
		return v, nil
	}
	return nil, fmt.Errorf("no validator set for height %d", height)
}

type BlockStore struct {
	mtx    sync.RWMutex
	height int64
}

func (bs *BlockStore) Height() int64      { bs.mtx.RLock(); defer bs.mtx.RUnlock(); return bs.height }
func (bs *BlockStore) SaveBlock(b *Block) { bs.mtx.Lock(); bs.height = b.Height; bs.mtx.Unlock() }

type RequestEndBlock struct{ Height int64 }
type ResponseEndBlock struct{ ValidatorUpdates []*Validator }

type Application interface {
	EndBlock(RequestEndBlock) ResponseEndBlock
}

// localClient is abcicli.NewLocalClient: one mutex shared by all connections.
type localClient struct {
	mtx *sync.Mutex
	Application
}

func (app *localClient) EndBlockSync(req RequestEndBlock) (*ResponseEndBlock, error) {
	app.mtx.Lock()
	defer app.mtx.Unlock()
	res := app.Application.EndBlock(req)
	return &res, nil
}

type AppConnConsensus interface {
	EndBlockSync(RequestEndBlock) (*ResponseEndBlock, error)
}

type BlockExecutor struct {
	db       *stateStore
	proxyApp AppConnConsensus
}

func execBlockOnProxyApp(proxyAppConn AppConnConsensus, block *Block) (*ResponseEndBlock, error) {
	return proxyAppConn.EndBlockSync(RequestEndBlock{Height: block.Height})
}

func (blockExec *BlockExecutor) ApplyBlock(state State, block *Block) (State, error) {
	if _, err := execBlockOnProxyApp(blockExec.proxyApp, block); err != nil {
		return state, err
	}
	state.LastBlockHeight = block.Height
	return state, nil
}

type VoteMessage struct{ Height, Power int64 }
type msgInfo struct{ Msg interface{} } // PeerID elided

type ConsensusState struct {
	mtx           sync.RWMutex
	state         State
	blockStore    *BlockStore
	blockExec     *BlockExecutor
	ProposalBlock *Block
	precommits    int64
}

func (cs *ConsensusState) GetState() State {
	cs.mtx.RLock()
	defer cs.mtx.RUnlock()
	return cs.state.Copy()
}

func (cs *ConsensusState) handleMsg(mi msgInfo) {
	cs.mtx.Lock()
	defer cs.mtx.Unlock()
	if msg, ok := mi.Msg.(*VoteMessage); ok {
		cs.precommits += msg.Power
		if 3*cs.precommits > 2*cs.state.Validators.Validators[0].VotingPower {
			cs.finalizeCommit(msg.Height)
		}
	}
}

func (cs *ConsensusState) finalizeCommit(height int64) {
	block := cs.ProposalBlock
	cs.blockStore.SaveBlock(block)
	stateCopy, err := cs.blockExec.ApplyBlock(cs.state.Copy(), block)
	if err == nil {
		cs.state = stateCopy
	}
}

// rpc/core: globals set by node.ConfigureRPC.
type Consensus interface{ GetState() State }

var (
	consensusState Consensus
	blockStore     *BlockStore
	stateDB        *stateStore
)

func getHeight(currentHeight int64, heightPtr *int64) (int64, error) {
	if heightPtr != nil && *heightPtr > currentHeight {
		return 0, fmt.Errorf("height must be less than or equal to the current blockchain height")
	}
	if heightPtr != nil {
		return *heightPtr, nil
	}
	return currentHeight, nil
}

func Validators(heightPtr *int64) (*ValidatorSet, error) {
	// The latest validator that we know is the NextValidator of the last block.
	height := blockStore.Height() + 1 // latestUncommittedHeight: no consensus lock
	height, err := getHeight(height, heightPtr)
	if err != nil {
		return nil, err
	}
	return LoadValidators(stateDB, height)
}

// rpc/client.Local calls the core handlers in process.
type Local struct{}

func (Local) Validators(height *int64) (*ValidatorSet, error) { return Validators(height) }

type validatorListProxy struct{ tmRPC Local }

func (p *validatorListProxy) validators(height int64) ([]*Validator, error) {
	result, err := p.tmRPC.Validators(&height)
	if err != nil {
		return nil, err
	}
	return result.Validators, nil
}

// The ABCI app (gallactic core/validator, abci/app.go).
type appValidatorSet struct{ proxy *validatorListProxy }

func (set *appValidatorSet) AdjustPower(height int64) error {
	_, err := set.proxy.validators(height)
	return err
}

type App struct{ set *appValidatorSet }

func (app *App) EndBlock(req RequestEndBlock) ResponseEndBlock {
	_ = app.set.AdjustPower(req.Height)
	return ResponseEndBlock{}
}

func TestB111tmrpcvalidatorsFixed(t *testing.T) {
	vals := &ValidatorSet{Validators: []*Validator{{Address: "val0", VotingPower: 10}}}
	stateDB = &stateStore{vals: map[int64]*ValidatorSet{1: vals, 2: vals}}
	blockStore = &BlockStore{}
	app := &App{set: &appValidatorSet{proxy: &validatorListProxy{}}}
	cs := &ConsensusState{
		state:         State{LastBlockHeight: 0, Validators: vals},
		blockStore:    blockStore,
		blockExec:     &BlockExecutor{db: stateDB, proxyApp: &localClient{mtx: new(sync.Mutex), Application: app}},
		ProposalBlock: &Block{Height: 1},
	}
	consensusState = cs

	// receiveRoutine: a precommit completes +2/3 for height 1.
	cs.handleMsg(msgInfo{Msg: &VoteMessage{Height: 1, Power: 10}})
}
