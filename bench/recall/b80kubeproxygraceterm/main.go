// Project: kubernetes kube-proxy IPVS mode (pkg/proxy/ipvs/graceful_termination.go), v1.13 era, late 2018 (approximate).
// Bug: graceTerminateRSList.flushList was made to hold q.lock while it runs the handler (deleteRsFunc) over every pending
// real server, but for each deleted entry it still called q.remove(rs), which takes q.lock again, so the periodic
// tryDeleteRs goroutine self-deadlocks and the proxier blocks on the list too; the fix deletes from q.list directly.
package main

import (
	"fmt"
	"sync"
)

// ---- pkg/util/ipvs ----

type VirtualServer struct {
	Address  string
	Protocol string
	Port     uint16
}

type RealServer struct {
	Address      string
	Port         uint16
	Weight       int
	ActiveConn   int
	InactiveConn int
}

func (rs *RealServer) Equal(other *RealServer) bool {
	return rs.Address == other.Address && rs.Port == other.Port
}

type Interface interface {
	GetRealServers(*VirtualServer) ([]*RealServer, error)
	UpdateRealServer(*VirtualServer, *RealServer) error
	DeleteRealServer(*VirtualServer, *RealServer) error
}

type fakeIPVS struct {
	mu  sync.Mutex
	rss map[string][]*RealServer
}

func (f *fakeIPVS) GetRealServers(vs *VirtualServer) ([]*RealServer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*RealServer(nil), f.rss[vs.Address]...), nil
}
func (f *fakeIPVS) UpdateRealServer(vs *VirtualServer, rs *RealServer) error { return nil }
func (f *fakeIPVS) DeleteRealServer(vs *VirtualServer, rs *RealServer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.rss[vs.Address][:0]
	for _, r := range f.rss[vs.Address] {
		if !r.Equal(rs) {
			out = append(out, r)
		}
	}
	f.rss[vs.Address] = out
	return nil
}

func IsRsGracefulTerminationNeeded(proto string) bool { return proto == "TCP" }

// ---- pkg/proxy/ipvs/graceful_termination.go ----

type listItem struct {
	VirtualServer *VirtualServer
	RealServer    *RealServer
}

func (g *listItem) String() string {
	return fmt.Sprintf("%s:%d/%s/%s:%d", g.VirtualServer.Address, g.VirtualServer.Port, g.VirtualServer.Protocol, g.RealServer.Address, g.RealServer.Port)
}

type graceTerminateRSList struct {
	lock sync.Mutex
	list map[string]*listItem
}

func (q *graceTerminateRSList) add(rs *listItem) bool {
	q.lock.Lock()
	defer q.lock.Unlock()
	uniqueRS := rs.String()
	if _, ok := q.list[uniqueRS]; ok {
		return false
	}
	q.list[uniqueRS] = rs
	return true
}

func (q *graceTerminateRSList) remove(rs *listItem) bool {
	q.lock.Lock()
	defer q.lock.Unlock()
	uniqueRS := rs.String()
	if _, ok := q.list[uniqueRS]; ok {
		delete(q.list, uniqueRS)
		return true
	}
	return false
}

// flushList (buggy): q.remove re-locks q.lock.
func (q *graceTerminateRSList) flushList(handler func(rsToDelete *listItem) (bool, error)) bool {
	q.lock.Lock()
	defer q.lock.Unlock()
	success := true
	for name, rs := range q.list {
		deleted, err := handler(rs)
		if err != nil {
			fmt.Printf("Try delete rs %q err: %v\n", name, err)
			success = false
		}
		if deleted {
			fmt.Printf("lw: remote out of the list: %s\n", name)
			q.remove(rs)
		}
	}
	return success
}

func (q *graceTerminateRSList) exist(uniqueRS string) (*listItem, bool) {
	q.lock.Lock()
	defer q.lock.Unlock()
	rs, ok := q.list[uniqueRS]
	return rs, ok
}

type GracefulTerminationManager struct {
	rsList graceTerminateRSList
	ipvs   Interface
}

func NewGracefulTerminationManager(ipvs Interface) *GracefulTerminationManager {
	return &GracefulTerminationManager{rsList: graceTerminateRSList{list: map[string]*listItem{}}, ipvs: ipvs}
}

func (m *GracefulTerminationManager) InTerminationList(uniqueRS string) bool {
	_, exist := m.rsList.exist(uniqueRS)
	return exist
}

func (m *GracefulTerminationManager) GracefulDeleteRS(vs *VirtualServer, rs *RealServer) error {
	ele := &listItem{VirtualServer: vs, RealServer: rs}
	deleted, err := m.deleteRsFunc(ele)
	if err != nil || deleted {
		return err
	}
	rs.Weight = 0
	if err := m.ipvs.UpdateRealServer(vs, rs); err != nil {
		return err
	}
	m.rsList.add(ele)
	return nil
}

func (m *GracefulTerminationManager) deleteRsFunc(rsToDelete *listItem) (bool, error) {
	rss, err := m.ipvs.GetRealServers(rsToDelete.VirtualServer)
	if err != nil {
		return false, err
	}
	for _, rs := range rss {
		if rsToDelete.RealServer.Equal(rs) {
			if IsRsGracefulTerminationNeeded(rsToDelete.VirtualServer.Protocol) && rs.ActiveConn+rs.InactiveConn != 0 {
				return false, nil
			}
			return true, m.ipvs.DeleteRealServer(rsToDelete.VirtualServer, rs)
		}
	}
	return true, fmt.Errorf("failed to delete rs %q, can't find the real server", rsToDelete.String())
}

func (m *GracefulTerminationManager) tryDeleteRs() {
	if !m.rsList.flushList(m.deleteRsFunc) {
		fmt.Println("Try flush graceful termination list err")
	}
}

func main() {
	vs := &VirtualServer{Address: "10.96.0.10", Protocol: "TCP", Port: 53}
	ipvs := &fakeIPVS{rss: map[string][]*RealServer{vs.Address: {{Address: "10.244.1.7", Port: 53, Weight: 1, ActiveConn: 2}}}}
	m := NewGracefulTerminationManager(ipvs)

	// proxier.syncProxyRules: the endpoint went away but still has connections.
	ele := &RealServer{Address: "10.244.1.7", Port: 53}
	if err := m.GracefulDeleteRS(vs, ele); err != nil {
		panic(err)
	}
	// The connections drain.
	ipvs.rss[vs.Address][0].ActiveConn = 0

	done := make(chan struct{})
	go func() { // wait.Until(m.tryDeleteRs, rsCheckDeleteInterval, wait.NeverStop), one round
		m.tryDeleteRs()
		close(done)
	}()
	<-done
	fmt.Println("still terminating:", m.InTerminationList("10.96.0.10:53/TCP/10.244.1.7:53"))
}
