// Project: lightningnetwork/lnd (htlcswitch/switch.go, htlcswitch/link.go, htlcswitch/interfaces.go)
// Issue: lightningnetwork/lnd#10008 (node locks up; the dump shows Switch.failAliasUpdate waiting on indexMtx under getLocalLink), fixed by PR #10035 "fix switch deadlock" (writer starvation in the switch, lnd v0.19.2)
//
// Fixed twin: as in PR #10035, getLocalLink no longer defers the RUnlock; it
// releases indexMtx as soon as the index lookups are done, before calling
// CheckHtlcTransit, so failAliasUpdate's read lock is never nested.
package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type ShortChannelID uint64

type MilliSatoshi uint64

type ChannelUpdate1 struct {
	ShortChannelID ShortChannelID
	Timestamp      uint32
}

type FailureMessage interface{ Code() uint16 }

type FailTemporaryChannelFailure struct{ Update *ChannelUpdate1 }

func (f *FailTemporaryChannelFailure) Code() uint16 { return 0x1007 }

type FailUnknownNextPeer struct{}

func (f *FailUnknownNextPeer) Code() uint16 { return 0x400a }

type LinkError struct {
	msg    FailureMessage
	detail string
}

func NewLinkError(msg FailureMessage) *LinkError { return &LinkError{msg: msg} }

func (l *LinkError) Error() string { return fmt.Sprintf("link error %#x %s", l.msg.Code(), l.detail) }

var ErrChannelLinkNotFound = errors.New("channel link not found")

type UpdateAddHTLC struct {
	PaymentHash [32]byte
	Amount      MilliSatoshi
	Expiry      uint32
}

type htlcPacket struct {
	outgoingChanID ShortChannelID
	htlc           *UpdateAddHTLC
}

// ChannelLink is the interface the switch uses to talk to a channel link.
type ChannelLink interface {
	ShortChanID() ShortChannelID
	EligibleToForward() bool
	CheckHtlcTransit(payHash [32]byte, amt MilliSatoshi, timeout uint32, heightNow uint32) *LinkError
}

// ChannelLinkConfig holds the switch-provided hooks of a link.
type ChannelLinkConfig struct {
	FailAliasUpdate        func(sid ShortChannelID, incoming bool) *ChannelUpdate1
	FetchLastChannelUpdate func(ShortChannelID) (*ChannelUpdate1, error)
}

type channelLink struct {
	cfg         ChannelLinkConfig
	shortChanID ShortChannelID
	balance     MilliSatoshi
}

func (l *channelLink) ShortChanID() ShortChannelID { return l.shortChanID }

func (l *channelLink) EligibleToForward() bool { return true }

// Bandwidth returns the amount the link can currently send.
func (l *channelLink) Bandwidth() MilliSatoshi {
	// AvailableBalance walks the pending updates of both commitments.
	time.Sleep(50 * time.Millisecond)
	return l.balance
}

func (l *channelLink) CheckHtlcTransit(payHash [32]byte, amt MilliSatoshi, timeout uint32, heightNow uint32) *LinkError {
	return l.canSendHtlc(payHash, amt, timeout, heightNow)
}

func (l *channelLink) canSendHtlc(payHash [32]byte, amt MilliSatoshi, timeout uint32, heightNow uint32) *LinkError {
	// Check to see if there is enough balance in this channel.
	if amt > l.Bandwidth() {
		cb := func(upd *ChannelUpdate1) FailureMessage {
			return &FailTemporaryChannelFailure{Update: upd}
		}
		failure := l.createFailureWithUpdate(false, l.shortChanID, cb)
		return &LinkError{msg: failure, detail: "insufficient balance"}
	}
	return nil
}

type createFailureWithUpdateCb func(update *ChannelUpdate1) FailureMessage

func (l *channelLink) createFailureWithUpdate(incoming bool, outgoingScid ShortChannelID, cb createFailureWithUpdateCb) FailureMessage {
	scid := outgoingScid
	if incoming {
		scid = l.ShortChanID()
	}

	// Try using the FailAliasUpdate function. If it returns nil, fallback
	// to the non-alias behavior.
	update := l.cfg.FailAliasUpdate(scid, incoming)
	if update == nil {
		var err error
		update, err = l.cfg.FetchLastChannelUpdate(l.ShortChanID())
		if err != nil {
			return &FailTemporaryChannelFailure{}
		}
	}
	return cb(update)
}

type Config struct {
	IsAlias                func(ShortChannelID) bool
	FetchLastChannelUpdate func(ShortChannelID) (*ChannelUpdate1, error)
}

type Switch struct {
	bestHeight uint32

	cfg *Config

	indexMtx        sync.RWMutex
	forwardingIndex map[ShortChannelID]ChannelLink
	baseIndex       map[ShortChannelID]ShortChannelID
	aliasToReal     map[ShortChannelID]ShortChannelID
}

func (s *Switch) getLinkByShortID(chanID ShortChannelID) (ChannelLink, error) {
	link, ok := s.forwardingIndex[chanID]
	if !ok {
		return nil, ErrChannelLinkNotFound
	}
	return link, nil
}

// getLocalLink handles the addition of a htlc for a send that originates from
// our node.
func (s *Switch) getLocalLink(pkt *htlcPacket, htlc *UpdateAddHTLC) (ChannelLink, *LinkError) {
	// Try to find links by node destination.
	s.indexMtx.RLock()
	link, err := s.getLinkByShortID(pkt.outgoingChanID)
	if err != nil {
		baseScid, ok := s.baseIndex[pkt.outgoingChanID]
		if !ok {
			s.indexMtx.RUnlock()
			return nil, NewLinkError(&FailUnknownNextPeer{})
		}
		link, err = s.getLinkByShortID(baseScid)
		if err != nil {
			s.indexMtx.RUnlock()
			return nil, NewLinkError(&FailUnknownNextPeer{})
		}
	}
	// We finished looking up the indexes, so we can unlock the mutex before
	// performing the link operations which might also acquire the lock
	// in case e.g. failAliasUpdate is called.
	s.indexMtx.RUnlock()

	if !link.EligibleToForward() {
		return nil, NewLinkError(&FailTemporaryChannelFailure{})
	}

	// Ensure that the htlc satisfies the outgoing channel policy.
	currentHeight := atomic.LoadUint32(&s.bestHeight)
	htlcErr := link.CheckHtlcTransit(htlc.PaymentHash, htlc.Amount, htlc.Expiry, currentHeight)
	if htlcErr != nil {
		return nil, htlcErr
	}
	return link, nil
}

// failAliasUpdate prepares a ChannelUpdate for a failed incoming or outgoing
// HTLC on a channel where the option-scid-alias feature bit was negotiated.
func (s *Switch) failAliasUpdate(scid ShortChannelID, incoming bool) *ChannelUpdate1 {
	// This function does not defer the unlocking because of the database
	// lookups for ChannelUpdate.
	s.indexMtx.RLock()

	if s.cfg.IsAlias(scid) {
		realScid, ok := s.aliasToReal[scid]
		s.indexMtx.RUnlock()
		if !ok {
			return nil
		}
		update, err := s.cfg.FetchLastChannelUpdate(realScid)
		if err != nil {
			return nil
		}
		update.ShortChannelID = scid
		return update
	}

	// The link does not use aliases.
	s.indexMtx.RUnlock()
	return nil
}

// AddLink is used to initiate the handling of the add link command.
func (s *Switch) AddLink(link ChannelLink) error {
	s.indexMtx.Lock()
	defer s.indexMtx.Unlock()

	s.forwardingIndex[link.ShortChanID()] = link
	return nil
}

func fetchLastChannelUpdate(scid ShortChannelID) (*ChannelUpdate1, error) {
	return &ChannelUpdate1{ShortChannelID: scid, Timestamp: 1751600000}, nil
}

func newLink(s *Switch, scid ShortChannelID, balance MilliSatoshi) *channelLink {
	return &channelLink{
		shortChanID: scid,
		balance:     balance,
		cfg: ChannelLinkConfig{
			FailAliasUpdate:        s.failAliasUpdate,
			FetchLastChannelUpdate: fetchLastChannelUpdate,
		},
	}
}

func main() {
	s := &Switch{
		bestHeight: 903211,
		cfg: &Config{
			IsAlias:                func(scid ShortChannelID) bool { return scid>>40 == 16000000 },
			FetchLastChannelUpdate: fetchLastChannelUpdate,
		},
		forwardingIndex: map[ShortChannelID]ChannelLink{},
		baseIndex:       map[ShortChannelID]ShortChannelID{},
		aliasToReal:     map[ShortChannelID]ShortChannelID{},
	}
	if err := s.AddLink(newLink(s, 991234567890, 20_000)); err != nil {
		panic(err)
	}

	var wg sync.WaitGroup
	wg.Add(2)

	// A payment is dispatched over a channel without enough balance.
	go func() {
		defer wg.Done()
		pkt := &htlcPacket{outgoingChanID: 991234567890, htlc: &UpdateAddHTLC{Amount: 150_000, Expiry: 903251}}
		_, linkErr := s.getLocalLink(pkt, pkt.htlc)
		fmt.Println("local link:", linkErr)
	}()

	// Meanwhile a peer reconnects and its channel link is registered.
	go func() {
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		fmt.Println("add link:", s.AddLink(newLink(s, 991234567999, 5_000_000)))
	}()

	wg.Wait()
}
