// Project: hashicorp/consul (consul/rtt.go, consul/serf.go)
// Bug:     PR #2130 "Fix deadlock in Consul RTT." (v0.6/v0.7 era)
//
// Server.getDatacentersByDistance takes remoteLock.RLock() and, while still
// holding it, sorts the DCs through the serfer interface:
// sortDatacentersByDistance -> getDatacenterDistance -> serverSerfer.
// GetNodesForDatacenter, which takes remoteLock.RLock() a second time. If a WAN
// serf member join (wanNodeJoin -> remoteLock.Lock()) arrives between the two
// read locks, the writer waits for the first reader and the second RLock waits
// for the writer: all remote-DC RPC forwarding and WAN membership handling hang.
// Deadlocking acquisition: the nested RLock in serverSerfer.GetNodesForDatacenter.
package main

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"
)

type Coordinate struct{ Vec float64 }

func (c *Coordinate) DistanceTo(o *Coordinate) time.Duration {
	return time.Duration(math.Abs(c.Vec-o.Vec) * float64(time.Millisecond))
}

// serfPool stands in for the WAN serf instance (s.serfWAN).
type serfPool struct {
	self   *Coordinate
	cached map[string]*Coordinate
}

func (p *serfPool) GetCoordinate() (*Coordinate, error) {
	time.Sleep(50 * time.Millisecond) // coordinate client update; long enough for a WAN join to queue up
	return p.self, nil
}

func (p *serfPool) GetCachedCoordinate(node string) (*Coordinate, bool) {
	c, ok := p.cached[node]
	return c, ok
}

type serverParts struct{ Name, Datacenter string }

type Config struct {
	Datacenter         string
	DisableCoordinates bool
}

type Server struct {
	config        *Config
	serfWAN       *serfPool
	remoteLock    sync.RWMutex
	remoteConsuls map[string][]*serverParts
}

// serfer provides the coordinate information we need from the Server.
type serfer interface {
	GetDatacenter() string
	GetCoordinate() (*Coordinate, error)
	GetCachedCoordinate(node string) (*Coordinate, bool)
	GetNodesForDatacenter(dc string) []string
}

type serverSerfer struct{ server *Server }

func (s *serverSerfer) GetDatacenter() string               { return s.server.config.Datacenter }
func (s *serverSerfer) GetCoordinate() (*Coordinate, error) { return s.server.serfWAN.GetCoordinate() }
func (s *serverSerfer) GetCachedCoordinate(node string) (*Coordinate, bool) {
	return s.server.serfWAN.GetCachedCoordinate(node)
}

func (s *serverSerfer) GetNodesForDatacenter(dc string) []string {
	s.server.remoteLock.RLock() // second RLock while getDatacentersByDistance still holds one
	defer s.server.remoteLock.RUnlock()
	nodes := make([]string, 0)
	for _, part := range s.server.remoteConsuls[dc] {
		nodes = append(nodes, part.Name)
	}
	return nodes
}

func getDatacenterDistance(s serfer, dc string) (float64, error) {
	if dc == s.GetDatacenter() {
		return 0.0, nil
	}
	coord, _ := s.GetCoordinate()
	nodes := s.GetNodesForDatacenter(dc)
	subvec := make([]float64, 0, len(nodes))
	for _, node := range nodes {
		if other, ok := s.GetCachedCoordinate(node); ok {
			subvec = append(subvec, coord.DistanceTo(other).Seconds())
		}
	}
	if len(subvec) > 0 {
		sort.Float64s(subvec)
		return subvec[len(subvec)/2], nil
	}
	return math.Inf(1.0), nil
}

func sortDatacentersByDistance(s serfer, dcs []string) error {
	vec := make([]float64, len(dcs))
	for i, dc := range dcs {
		rtt, err := getDatacenterDistance(s, dc)
		if err != nil {
			return err
		}
		vec[i] = rtt
	}
	sort.SliceStable(dcs, func(i, j int) bool { return vec[i] < vec[j] })
	return nil
}

func (s *Server) getDatacentersByDistance() ([]string, error) {
	s.remoteLock.RLock()
	defer s.remoteLock.RUnlock()

	var dcs []string
	for dc := range s.remoteConsuls {
		dcs = append(dcs, dc)
	}
	sort.Strings(dcs)
	if s.config.DisableCoordinates {
		return dcs, nil
	}
	serfer := serverSerfer{s}
	if err := sortDatacentersByDistance(&serfer, dcs); err != nil {
		return nil, err
	}
	return dcs, nil
}

// wanNodeJoin is the WAN serf EventMemberJoin handler.
func (s *Server) wanNodeJoin(parts *serverParts) {
	s.remoteLock.Lock()
	s.remoteConsuls[parts.Datacenter] = append(s.remoteConsuls[parts.Datacenter], parts)
	s.remoteLock.Unlock()
}

func main() {
	s := &Server{
		config: &Config{Datacenter: "dc1"},
		serfWAN: &serfPool{self: &Coordinate{Vec: 1}, cached: map[string]*Coordinate{
			"srv-dc2": {Vec: 30}, "srv-dc3": {Vec: 10},
		}},
		remoteConsuls: map[string][]*serverParts{
			"dc1": {{Name: "srv-dc1", Datacenter: "dc1"}},
			"dc2": {{Name: "srv-dc2", Datacenter: "dc2"}},
			"dc3": {{Name: "srv-dc3", Datacenter: "dc3"}},
		},
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		s.wanNodeJoin(&serverParts{Name: "srv-dc4", Datacenter: "dc4"})
	}()
	dcs, err := s.getDatacentersByDistance() // e.g. from Catalog.ListDatacenters
	fmt.Println("datacenters by distance:", dcs, err)
}
