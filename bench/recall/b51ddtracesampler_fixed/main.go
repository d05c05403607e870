// Project: Datadog Agent (DataDog/datadog-agent), trace-agent, 7.35.0-rc.2 (2022).
// Files/functions: pkg/trace/sampler/coresampler.go (Sampler.countWeightedSig,
// Sampler.updateRates, Sampler.getSignatureSampleRate, Sampler.defaultRate),
// pkg/trace/sampler/scoresampler.go (ScoreSampler.Sample), called by the
// trace-agent's concurrent trace processing workers.
// PR: DataDog/datadog-agent#11538 "pkg/trace: Fix deadlock" (the deadlock came
// in with PR #11069 and was caught on 7.35.0-rc.2).
//
// The core sampler keeps two RWMutexes: muSeen protects the sliding window of
// seen weights, muRates protects the per-signature rates. countWeightedSig
// write-locks muSeen and, when the 5 s bucket rotates, calls updateRates,
// which write-locks muRates to install the new rates. getSignatureSampleRate
// read-locks muRates and, for a signature it has no rate for yet, calls
// defaultRate, which read-locks muSeen to find the busiest bucket, while
// still holding muRates. One worker rotating the buckets (muSeen -> muRates)
// and another sampling a trace with a new signature (muRates -> muSeen)
// deadlock. The fix releases muRates before calling defaultRate.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type Signature uint64

const numBuckets = 6

var bucketDuration = 5 * time.Second

type Sampler struct {
	seen         map[Signature][numBuckets]float32
	allSigsSeen  [numBuckets]float32
	lastBucketID int64
	rates        map[Signature]float64
	lowestRate   float64

	// muSeen protects seen, allSigsSeen and lastBucketID.
	muSeen sync.RWMutex
	// muRates protects rates and lowestRate.
	muRates sync.RWMutex

	targetTPS atomic.Value
	extraRate float64
}

func newSampler(extraRate, targetTPS float64) *Sampler {
	s := &Sampler{
		seen:      make(map[Signature][numBuckets]float32),
		rates:     make(map[Signature]float64),
		extraRate: extraRate,
	}
	s.targetTPS.Store(targetTPS)
	return s
}

// countWeightedSig counts a trace sampled by the sampler and updates rates
// if buckets are rotated.
func (s *Sampler) countWeightedSig(now time.Time, signature Signature, n float32) bool {
	bucketID := now.Unix() / int64(bucketDuration.Seconds())
	s.muSeen.Lock()
	prevBucketID := s.lastBucketID
	s.lastBucketID = bucketID

	updateRates := prevBucketID != bucketID
	if updateRates {
		s.updateRates(prevBucketID, bucketID)
	}

	buckets := s.seen[signature]
	s.allSigsSeen[bucketID%numBuckets] += n
	buckets[bucketID%numBuckets] += n
	s.seen[signature] = buckets
	s.muSeen.Unlock()
	return updateRates
}

// updateRates distributes TPS on each signature. The caller holds muSeen.
func (s *Sampler) updateRates(previousBucket, newBucket int64) {
	rates := make(map[Signature]float64, len(s.seen))
	for sig, buckets := range s.seen {
		var maxSeen float32
		for _, b := range buckets {
			if b > maxSeen {
				maxSeen = b
			}
		}
		if maxSeen > 0 {
			rates[sig] = s.targetTPS.Load().(float64) / (float64(maxSeen) / bucketDuration.Seconds())
		}
	}
	s.muRates.Lock()
	defer s.muRates.Unlock()
	s.rates = rates
}

func (s *Sampler) getSignatureSampleRate(sig Signature) float64 {
	s.muRates.RLock()
	rate, ok := s.rates[sig]
	s.muRates.RUnlock()
	if !ok {
		return s.defaultRate()
	}
	return rate
}

// defaultRate returns the rate to apply to a signature not seen before.
func (s *Sampler) defaultRate() float64 {
	targetTPS := s.targetTPS.Load().(float64)
	if targetTPS == 0 {
		return 0
	}
	// Computing the extra-rate adjustment takes a moment.
	time.Sleep(50 * time.Millisecond)

	var maxSeen float32
	s.muSeen.RLock()
	defer s.muSeen.RUnlock()
	for _, b := range s.allSigsSeen {
		if b > maxSeen {
			maxSeen = b
		}
	}
	seenTPS := float64(maxSeen) / bucketDuration.Seconds()
	if seenTPS == 0 {
		return 1
	}
	return targetTPS / seenTPS
}

// ScoreSampler is the errors / no-priority sampler shared by all workers.
type ScoreSampler struct {
	*Sampler
}

func (s *ScoreSampler) Sample(now time.Time, signature Signature, weight float32) bool {
	s.countWeightedSig(now, signature, weight)
	rate := s.getSignatureSampleRate(signature)
	return rate*s.extraRate >= 1
}

func main() {
	errorsSampler := &ScoreSampler{Sampler: newSampler(1, 10)}
	start := time.Unix(1_650_000_000, 0)
	errorsSampler.countWeightedSig(start, 1, 1)

	done := make(chan bool)
	// Worker 1 samples a trace whose signature has no rate yet.
	go func() { done <- errorsSampler.Sample(start, 2, 1) }()

	time.Sleep(10 * time.Millisecond)
	// Worker 2 samples a trace in the next bucket, which rotates the window.
	go func() { done <- errorsSampler.Sample(start.Add(bucketDuration), 1, 1) }()

	fmt.Println("sampled:", <-done, <-done)
}
