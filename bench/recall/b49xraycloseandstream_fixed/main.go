// Project: aws/aws-xray-sdk-go v1.8.0.
// Files/functions: xray/segment.go (Segment.CloseAndStream, Segment.RemoveSubsegment,
// Segment.Close, Segment.send, Segment.emit), xray/default_emitter.go (DefaultEmitter.Emit),
// xray/segment_model.go / emitter packing (packSegments), xraylog (Logger interface, logger.Debugf).
// Issue/PR: aws/aws-xray-sdk-go#392 "Mutex deadlock", fixed by aws/aws-xray-sdk-go#393
// "Fix: mutex deadlock".
//
// CloseAndStream locks the subsegment (defer Unlock) and, while holding it, calls
// seg.parent.RemoveSubsegment(seg), which locks the parent. Concurrently the parent
// segment is closed: Close -> send locks the parent and emits it, and packSegments locks
// each raw subsegment in turn to marshal it. The goroutine streaming a subsegment holds
// subsegment -> parent, the goroutine closing the segment holds parent -> subsegment, and
// both hang (the request handler and the downstream call never return). The fix no longer
// holds the subsegment's lock when it removes the subsegment from its parent.
package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

type Logger interface {
	Debugf(format string, args ...interface{})
}

var logger Logger = nopLogger{}

type nopLogger struct{}

func (nopLogger) Debugf(string, ...interface{}) {}

type Emitter interface{ Emit(seg *Segment) }

type Segment struct {
	sync.Mutex
	parent         *Segment
	ParentSegment  *Segment `json:"-"`
	rawSubsegments []*Segment
	openSegments   int
	emitter        Emitter

	Name        string            `json:"name"`
	EndTime     float64           `json:"end_time,omitempty"`
	InProgress  bool              `json:"in_progress,omitempty"`
	Emitted     bool              `json:"-"`
	Subsegments []json.RawMessage `json:"subsegments,omitempty"`
}

func BeginSegment(name string, emitter Emitter) *Segment {
	seg := &Segment{Name: name, InProgress: true, emitter: emitter}
	seg.ParentSegment = seg
	return seg
}

func (parent *Segment) BeginSubsegment(name string) *Segment {
	seg := &Segment{Name: name, InProgress: true, parent: parent, ParentSegment: parent.ParentSegment}
	parent.Lock()
	parent.rawSubsegments = append(parent.rawSubsegments, seg)
	parent.openSegments++
	parent.Unlock()
	return seg
}

// RemoveSubsegment removes a subsegment child from a segment or subsegment.
func (seg *Segment) RemoveSubsegment(remove *Segment) bool {
	seg.Lock()
	defer seg.Unlock()
	for i, v := range seg.rawSubsegments {
		if v == remove {
			seg.rawSubsegments = append(seg.rawSubsegments[:i], seg.rawSubsegments[i+1:]...)
			seg.openSegments--
			return true
		}
	}
	return false
}

// CloseAndStream closes a subsegment and sends it.
func (seg *Segment) CloseAndStream(err error) {
	seg.Lock()
	if seg.parent != nil {
		logger.Debugf("Ending subsegment named: %s", seg.Name)
		seg.EndTime = float64(time.Now().UnixNano()) / float64(time.Second)
		seg.InProgress = false
		seg.Emitted = true
	}
	seg.Unlock()

	if seg.parent != nil && seg.parent.RemoveSubsegment(seg) {
		logger.Debugf("Removing subsegment named: %s", seg.Name)
	}

	seg.Lock()
	defer seg.Unlock()
	seg.emit()
}

// Close a segment.
func (seg *Segment) Close(err error) {
	seg.Lock()
	logger.Debugf("Closing segment named %s", seg.Name)
	seg.EndTime = float64(time.Now().UnixNano()) / float64(time.Second)
	seg.InProgress = false
	seg.Unlock()
	seg.send()
}

func (seg *Segment) send() {
	seg.Lock()
	defer seg.Unlock()
	seg.emit()
}

func (seg *Segment) emit() { seg.ParentSegment.emitter.Emit(seg) }

func packSegments(seg *Segment, outSegments [][]byte) [][]byte {
	for _, s := range seg.rawSubsegments {
		s.Lock()
		outSegments = packSegments(s, outSegments)
		if b, err := json.Marshal(s); err == nil {
			seg.Subsegments = append(seg.Subsegments, b)
		}
		s.Unlock()
	}
	if seg.parent == nil {
		if b, err := json.Marshal(seg); err == nil {
			outSegments = append(outSegments, b)
		}
	}
	return outSegments
}

type DefaultEmitter struct{ sync.Mutex }

func (de *DefaultEmitter) Emit(seg *Segment) {
	for _, p := range packSegments(seg, nil) {
		de.Lock()
		fmt.Println("udp send:", string(p)) // to the X-Ray daemon
		de.Unlock()
	}
}

// debugLogger writes the SDK's debug output to a slow sink.
type debugLogger struct{}

func (debugLogger) Debugf(format string, args ...interface{}) {
	if strings.HasPrefix(format, "Ending subsegment") {
		time.Sleep(100 * time.Millisecond)
	}
}

func main() {
	logger = debugLogger{}
	root := BeginSegment("orders-api", &DefaultEmitter{})
	sub := root.BeginSubsegment("DynamoDB.GetItem")

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the downstream call finishes and streams its subsegment
		defer wg.Done()
		sub.CloseAndStream(nil)
	}()
	go func() { // the HTTP handler returns; the middleware closes the segment
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		root.Close(nil)
	}()
	wg.Wait()
	fmt.Println("done")
}
