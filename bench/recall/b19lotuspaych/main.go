// Project: filecoin-project/lotus (paychmgr)
// Bug: channelAccessor.addVoucher took ca.lk and returned early when voucher
// validation failed without unlocking it. The next operation on the same
// payment channel (listVouchers, from the retrieval client) blocked forever
// on ca.lk: lock leaked on an error path.
// Fix: `defer ca.lk.Unlock()` right after acquiring the lock.

package main

import (
	"errors"
	"fmt"
	"math/big"
	"sync"
)

type Address string

type SignedVoucher struct {
	ChannelAddr Address
	Lane        uint64
	Nonce       uint64
	Amount      *big.Int
	Signature   []byte
}

type VoucherInfo struct {
	Voucher   *SignedVoucher
	Proof     []byte
	Submitted bool
}

type ChannelInfo struct {
	Channel   Address
	Control   Address
	Target    Address
	Direction int
	Vouchers  []*VoucherInfo
	NextLane  uint64
}

type Store struct {
	mu    sync.Mutex
	infos map[Address]*ChannelInfo
}

func (ps *Store) ByAddress(ch Address) (*ChannelInfo, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ci, ok := ps.infos[ch]
	if !ok {
		return nil, fmt.Errorf("channel %s not found", ch)
	}
	return ci, nil
}

type channelAccessor struct {
	from, to Address
	store    *Store
	lk       sync.Mutex
}

func (ca *channelAccessor) checkVoucherValid(ci *ChannelInfo, sv *SignedVoucher) error {
	if len(sv.Signature) == 0 {
		return errors.New("voucher has no signature")
	}
	if sv.Amount.Sign() <= 0 {
		return errors.New("voucher amount must be positive")
	}
	for _, v := range ci.Vouchers {
		if v.Voucher.Lane == sv.Lane && v.Voucher.Nonce >= sv.Nonce {
			return fmt.Errorf("nonce too low: lane %d nonce %d", sv.Lane, sv.Nonce)
		}
	}
	return nil
}

func (ca *channelAccessor) addVoucher(ch Address, sv *SignedVoucher, proof []byte) (*big.Int, error) {
	ca.lk.Lock()

	ci, err := ca.store.ByAddress(ch)
	if err != nil {
		return nil, err
	}
	if err := ca.checkVoucherValid(ci, sv); err != nil {
		return nil, fmt.Errorf("add voucher: %w", err)
	}
	delta := new(big.Int).Set(sv.Amount)
	for _, v := range ci.Vouchers {
		if v.Voucher.Lane == sv.Lane {
			delta.Sub(delta, v.Voucher.Amount)
		}
	}
	ci.Vouchers = append(ci.Vouchers, &VoucherInfo{Voucher: sv, Proof: proof})
	ca.lk.Unlock()
	return delta, nil
}

func (ca *channelAccessor) listVouchers(ch Address) ([]*VoucherInfo, error) {
	ca.lk.Lock()
	defer ca.lk.Unlock()
	ci, err := ca.store.ByAddress(ch)
	if err != nil {
		return nil, err
	}
	return ci.Vouchers, nil
}

func main() {
	ch := Address("t2paych")
	store := &Store{infos: map[Address]*ChannelInfo{
		ch: {Channel: ch, Control: "t1client", Target: "t1miner"},
	}}
	ca := &channelAccessor{from: "t1client", to: "t1miner", store: store}

	done := make(chan struct{})
	go func() { // provider receives a voucher with a missing signature
		defer close(done)
		_, err := ca.addVoucher(ch, &SignedVoucher{ChannelAddr: ch, Lane: 0, Nonce: 1,
			Amount: big.NewInt(100)}, nil)
		fmt.Println("provider:", err)
	}()
	<-done

	vis, err := ca.listVouchers(ch)
	fmt.Println("vouchers:", len(vis), err)
}
