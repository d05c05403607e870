// Project: kubeedge/kubeedge (edge part of the Kubernetes edge platform),
// v0.1/v0.2, December 2018.
// Files/functions: edge/pkg/devicetwin/dtmanager/device.go (DeviceWorker.Start,
// dealDeviceStateUpdate, dealDeviceUpdated, UpdateDeviceAttr),
// edge/pkg/devicetwin/dtcontext/dtcontext.go (DTContext.GetMutex,
// DTContext.Lock, DTContext.Unlock: a per-device mutex kept in a sync.Map,
// taken under the context-wide RWMutex).
// Issue #41 "There is a potential to not release the lock"; fixed by PR #42
// "Use defer to release the lock".
//
// dealDeviceStateUpdate locks the device through DTContext.Lock (read lock on
// dtc.Mutex, then the device's own mutex from DeviceMutex) and unlocks it only
// at the end of the success path. Its early returns - the device is not in
// DeviceList, the entry is not a *Device, or the reported state is none of
// "online", "offline" and "unknown" - return with both locks held. A mapper
// reporting a state such as "unreachable" therefore leaves the device
// locked; the next message for that device, here a DeviceUpdated handled by
// the same DeviceWorker goroutine through UpdateDeviceAttr, blocks in
// DTContext.Lock forever and the device twin module stops processing. The
// fix defers context.Unlock(deviceID) right before taking the lock.
package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"
)

const (
	DeviceUpdated     = "DeviceUpdated"
	DeviceStateUpdate = "DeviceStateUpdate"
	CommModule        = "CommModule"
)

type Message struct{ Content []byte }

type DTMessage struct {
	Msg      *Message
	Identity string
	Action   string
}

type MsgAttr struct{ Value string }

type DeviceUpdate struct {
	State      string              `json:"state,omitempty"`
	Attributes map[string]*MsgAttr `json:"attributes,omitempty"`
}

type Device struct {
	ID, State, LastOnline string
	Attributes            map[string]*MsgAttr
}

// DTContext context for devicetwin
type DTContext struct {
	CommChan    map[string]chan interface{}
	DeviceList  *sync.Map
	DeviceMutex *sync.Map
	Mutex       *sync.RWMutex
}

// CommTo communicate
func (dtc *DTContext) CommTo(dtmName string, content interface{}) error {
	if v, exist := dtc.CommChan[dtmName]; exist {
		v <- content
		return nil
	}
	return fmt.Errorf("not found chan to communicate")
}

// GetMutex get mutex
func (dtc *DTContext) GetMutex(deviceID string) (*sync.Mutex, bool) {
	v, _ := dtc.DeviceMutex.Load(deviceID)
	mutex, isMutex := v.(*sync.Mutex)
	return mutex, isMutex
}

// Lock get the lock of the device
func (dtc *DTContext) Lock(deviceID string) bool {
	deviceMutex, ok := dtc.GetMutex(deviceID)
	if ok {
		dtc.Mutex.RLock()
		deviceMutex.Lock()
		return true
	}
	return false
}

// Unlock remove the lock of the device
func (dtc *DTContext) Unlock(deviceID string) bool {
	deviceMutex, ok := dtc.GetMutex(deviceID)
	if ok {
		deviceMutex.Unlock()
		dtc.Mutex.RUnlock()
		return true
	}
	return false
}

// CallBack for deal
type CallBack func(*DTContext, string, interface{}) (interface{}, error)

var deviceActionCallBack map[string]CallBack

type DeviceWorker struct {
	ReceiverChan chan interface{}
	DTContexts   *DTContext
}

// Start worker
func (dw DeviceWorker) Start() {
	initDeviceActionCallBack()
	for msg := range dw.ReceiverChan {
		if dtMsg, isDTMessage := msg.(*DTMessage); isDTMessage {
			if fn, exist := deviceActionCallBack[dtMsg.Action]; exist {
				if _, err := fn(dw.DTContexts, dtMsg.Identity, dtMsg.Msg); err != nil {
					fmt.Printf("DeviceModule deal %s event failed: %v\n", dtMsg.Action, err)
				}
			}
		}
	}
}

func initDeviceActionCallBack() {
	deviceActionCallBack = make(map[string]CallBack)
	deviceActionCallBack[DeviceUpdated] = dealDeviceUpdated
	deviceActionCallBack[DeviceStateUpdate] = dealDeviceStateUpdate
}

func dealDeviceStateUpdate(context *DTContext, resource string, msg interface{}) (interface{}, error) {
	message := msg.(*Message)
	var updateDevice DeviceUpdate
	if err := json.Unmarshal(message.Content, &updateDevice); err != nil {
		return nil, err
	}
	deviceID := resource
	defer context.Unlock(deviceID)
	context.Lock(deviceID)
	doc, docExist := context.DeviceList.Load(deviceID)
	if !docExist {
		return nil, nil
	}
	device, ok := doc.(*Device)
	if !ok {
		return nil, nil
	}
	if strings.Compare("online", updateDevice.State) != 0 && strings.Compare("offline", updateDevice.State) != 0 && strings.Compare("unknown", updateDevice.State) != 0 {
		return nil, nil
	}
	device.State = updateDevice.State
	device.LastOnline = time.Now().Format("2006-01-02 15:04:05")
	return nil, context.CommTo(CommModule, "state of "+deviceID+" is "+updateDevice.State)
}

func dealDeviceUpdated(context *DTContext, resource string, msg interface{}) (interface{}, error) {
	message := msg.(*Message)
	var updateDevice DeviceUpdate
	if err := json.Unmarshal(message.Content, &updateDevice); err != nil {
		return nil, err
	}
	return UpdateDeviceAttr(context, resource, updateDevice.Attributes)
}

// UpdateDeviceAttr update device attributes
func UpdateDeviceAttr(context *DTContext, deviceID string, attributes map[string]*MsgAttr) (interface{}, error) {
	context.Lock(deviceID)
	if doc, docExist := context.DeviceList.Load(deviceID); docExist {
		maps.Copy(doc.(*Device).Attributes, attributes)
	}
	context.Unlock(deviceID)
	return nil, context.CommTo(CommModule, "attributes of "+deviceID+" updated")
}

func main() {
	dtc := &DTContext{
		CommChan:    map[string]chan interface{}{CommModule: make(chan interface{}, 8)},
		DeviceList:  &sync.Map{},
		DeviceMutex: &sync.Map{},
		Mutex:       &sync.RWMutex{},
	}
	dtc.DeviceList.Store("sensor-1", &Device{ID: "sensor-1", State: "online", Attributes: map[string]*MsgAttr{}})
	dtc.DeviceMutex.Store("sensor-1", &sync.Mutex{})

	dw := DeviceWorker{ReceiverChan: make(chan interface{}, 8), DTContexts: dtc}
	go dw.Start()

	state, _ := json.Marshal(DeviceUpdate{State: "unreachable"})
	attrs, _ := json.Marshal(DeviceUpdate{Attributes: map[string]*MsgAttr{"temperature": {Value: "21"}}})
	dw.ReceiverChan <- &DTMessage{Action: DeviceStateUpdate, Identity: "sensor-1", Msg: &Message{Content: state}}
	dw.ReceiverChan <- &DTMessage{Action: DeviceUpdated, Identity: "sensor-1", Msg: &Message{Content: attrs}}

	fmt.Println(<-dtc.CommChan[CommModule])
}
