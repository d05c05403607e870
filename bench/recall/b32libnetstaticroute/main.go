// Project: moby/libnetwork (endpoint_info.go, endpoint.go, drivers/remote/driver.go, driverapi)
// Issue: moby/libnetwork#545 "[REGRESSION] docker hangs when running containers with routes
// defined", fixed by moby/libnetwork#546 "Remove unwanted lock".
//
// Bug: when a container joins a network served by a remote (plugin) driver, the endpoint hands
// itself to the driver as a driverapi.JoinInfo. The remote driver (e.g. Calico) answers the Join
// with static routes and calls back jinfo.AddStaticRoute for each one. endpoint.AddStaticRoute
// takes the endpoint's embedded mutex (ep.Lock(), line 115) and, for a connected route (no next
// hop, RouteType CONNECTED), calls the helper ep.addInterfaceRoute, which takes the same embedded
// mutex again (ep.Lock(), line 133). sync.Mutex is not re-entrant, so the daemon goroutine doing
// the join blocks forever on line 133 and every later operation on that endpoint hangs.
// The fix removed the locking from addInterfaceRoute (later inlined into AddStaticRoute).
package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// ---- types ----

// IPNet stands in for net.IPNet (the program avoids importing net).
type IPNet struct {
	IP   string
	Mask string
}

func (n *IPNet) String() string { return n.IP + "/" + n.Mask }

// Route types, as in libnetwork/types.
const (
	NEXTHOP = iota
	CONNECTED
)

// StaticRoute is a statically-provisioned IP route.
type StaticRoute struct {
	Destination *IPNet
	RouteType   int
	NextHop     string
}

// ---- driverapi ----

// InterfaceNameInfo provides a go interface for the drivers to assign names to interfaces.
type InterfaceNameInfo interface {
	SetNames(srcName, dstPrefix string) error
}

// JoinInfo represents a set of resources that the driver has the ability to provide during
// join time.
type JoinInfo interface {
	InterfaceName() InterfaceNameInfo
	SetGateway(gw string) error
	AddStaticRoute(destination *IPNet, routeType int, nextHop string) error
}

// Driver is an interface that every plugin driver needs to implement.
type Driver interface {
	Join(nid, eid string, sboxKey string, jinfo JoinInfo, options map[string]interface{}) error
	Type() string
}

// ---- libnetwork endpoint ----

type endpointInterface struct {
	srcName   string
	dstPrefix string
	routes    []*IPNet
}

func (epi *endpointInterface) SetNames(srcName string, dstPrefix string) error {
	epi.srcName = srcName
	epi.dstPrefix = dstPrefix
	return nil
}

type endpointJoinInfo struct {
	gw           string
	StaticRoutes []*StaticRoute
}

type endpoint struct {
	name      string
	id        string
	iface     *endpointInterface
	joinInfo  *endpointJoinInfo
	sandboxID string
	network   *network
	sync.Mutex
}

func (ep *endpoint) InterfaceName() InterfaceNameInfo {
	ep.Lock()
	defer ep.Unlock()

	if ep.iface != nil {
		return ep.iface
	}

	return nil
}

func (ep *endpoint) SetGateway(gw string) error {
	ep.Lock()
	defer ep.Unlock()

	ep.joinInfo.gw = gw
	return nil
}

func (ep *endpoint) AddStaticRoute(destination *IPNet, routeType int, nextHop string) error {
	ep.Lock()
	defer ep.Unlock()

	r := StaticRoute{Destination: destination, RouteType: routeType, NextHop: nextHop}

	if routeType == NEXTHOP {
		// If the route specifies a next-hop, then it's loosely routed (i.e. not bound to a particular interface).
		ep.joinInfo.StaticRoutes = append(ep.joinInfo.StaticRoutes, &r)
	} else {
		// If the route doesn't specify a next-hop, it must be a connected route, bound to an interface.
		if err := ep.addInterfaceRoute(&r); err != nil {
			return err
		}
	}
	return nil
}

func (ep *endpoint) addInterfaceRoute(route *StaticRoute) error {
	ep.Lock()
	defer ep.Unlock()

	iface := ep.iface
	iface.routes = append(iface.routes, route.Destination)
	return nil
}

type network struct {
	id          string
	networkType string
	driver      Driver
	sync.Mutex
}

func (n *network) ID() string {
	n.Lock()
	defer n.Unlock()
	return n.id
}

func (n *network) getDriver() Driver {
	n.Lock()
	defer n.Unlock()
	return n.driver
}

type sandbox struct {
	id  string
	key string
	sync.Mutex
}

func (sb *sandbox) ID() string  { return sb.id }
func (sb *sandbox) Key() string { return sb.key }
func (sb *sandbox) Labels() map[string]interface{} {
	return map[string]interface{}{}
}

// Join joins the sandbox to the endpoint and populates into the sandbox
// the network resources allocated for the endpoint.
func (ep *endpoint) Join(sb *sandbox) error {
	if sb == nil {
		return errors.New("invalid Sandbox passed to enpoint join")
	}
	return ep.sbJoin(sb)
}

func (ep *endpoint) sbJoin(sb *sandbox) error {
	ep.Lock()
	if ep.sandboxID != "" {
		ep.Unlock()
		return fmt.Errorf("another container is attached to the same network endpoint")
	}
	network := ep.network
	ep.sandboxID = sb.ID()
	ep.joinInfo = &endpointJoinInfo{}
	epid := ep.id
	ep.Unlock()

	nid := network.ID()
	d := network.getDriver()
	if d == nil {
		return fmt.Errorf("failed to join endpoint: no driver")
	}

	if err := d.Join(nid, epid, sb.Key(), ep, sb.Labels()); err != nil {
		return err
	}
	return nil
}

// ---- drivers/remote ----

// api types of the remote driver protocol (drivers/remote/api).
type JoinRequest struct {
	NetworkID  string
	EndpointID string
	SandboxKey string
	Options    map[string]interface{}
}

type apiInterfaceName struct {
	SrcName   string
	DstPrefix string
}

type apiStaticRoute struct {
	Destination string
	RouteType   int
	NextHop     string
}

type JoinResponse struct {
	Err           string
	InterfaceName *apiInterfaceName
	Gateway       string
	StaticRoutes  []apiStaticRoute
}

// pluginClient is the plugins.Client the remote driver talks to.
type pluginClient interface {
	Call(serviceMethod string, args interface{}, ret interface{}) error
}

type remoteDriver struct {
	endpoint    pluginClient
	networkType string
}

func newDriver(name string, client pluginClient) Driver {
	return &remoteDriver{networkType: name, endpoint: client}
}

func (d *remoteDriver) call(methodName string, arg interface{}, retVal *JoinResponse) error {
	method := "NetworkDriver" + "." + methodName
	if err := d.endpoint.Call(method, arg, retVal); err != nil {
		return err
	}
	if e := retVal.Err; e != "" {
		return fmt.Errorf("remote: %s", e)
	}
	return nil
}

func (d *remoteDriver) Type() string { return d.networkType }

func parseStaticRoutes(r JoinResponse) ([]*StaticRoute, error) {
	var routes = make([]*StaticRoute, len(r.StaticRoutes))
	for i, inRoute := range r.StaticRoutes {
		parts := strings.SplitN(inRoute.Destination, "/", 2)
		if len(parts) != 2 {
			return nil, fmt.Errorf("bad route destination %q", inRoute.Destination)
		}
		routes[i] = &StaticRoute{
			Destination: &IPNet{IP: parts[0], Mask: parts[1]},
			RouteType:   inRoute.RouteType,
			NextHop:     inRoute.NextHop,
		}
	}
	return routes, nil
}

// Join method is invoked when a Sandbox is attached to an endpoint.
func (d *remoteDriver) Join(nid, eid string, sboxKey string, jinfo JoinInfo, options map[string]interface{}) error {
	join := &JoinRequest{
		NetworkID:  nid,
		EndpointID: eid,
		SandboxKey: sboxKey,
		Options:    options,
	}
	var (
		res JoinResponse
		err error
	)
	if err = d.call("Join", join, &res); err != nil {
		return err
	}

	ifaceName := res.InterfaceName
	if iface := jinfo.InterfaceName(); iface != nil && ifaceName != nil {
		if err := iface.SetNames(ifaceName.SrcName, ifaceName.DstPrefix); err != nil {
			return fmt.Errorf("failed to set interface name: %s", err)
		}
	}

	if res.Gateway != "" {
		if jinfo.SetGateway(res.Gateway) != nil {
			return fmt.Errorf("failed to set gateway: %v", res.Gateway)
		}
	}
	if len(res.StaticRoutes) > 0 {
		routes, err := parseStaticRoutes(res)
		if err != nil {
			return err
		}
		for _, route := range routes {
			if jinfo.AddStaticRoute(route.Destination, route.RouteType, route.NextHop) != nil {
				return fmt.Errorf("failed to set static route: %v", route)
			}
		}
	}
	return nil
}

// ---- a Calico-like network plugin answering the Join ----

type calicoPlugin struct{}

func (calicoPlugin) Call(serviceMethod string, args interface{}, ret interface{}) error {
	if serviceMethod != "NetworkDriver.Join" {
		return fmt.Errorf("unexpected call %s", serviceMethod)
	}
	res := ret.(*JoinResponse)
	res.InterfaceName = &apiInterfaceName{SrcName: "cali0", DstPrefix: "eth"}
	res.Gateway = "169.254.1.1"
	// The gateway is reachable through a connected (interface) route, then the default route
	// goes through it.
	res.StaticRoutes = []apiStaticRoute{
		{Destination: "169.254.1.1/32", RouteType: CONNECTED},
		{Destination: "0.0.0.0/0", RouteType: NEXTHOP, NextHop: "169.254.1.1"},
	}
	return nil
}

func main() {
	d := newDriver("calico", calicoPlugin{})
	n := &network{id: "net1", networkType: "calico", driver: d}
	ep := &endpoint{
		name:    "web",
		id:      "ep1",
		iface:   &endpointInterface{},
		network: n,
	}
	sb := &sandbox{id: "sb1", key: "/var/run/docker/netns/sb1"}

	if err := ep.Join(sb); err != nil {
		fmt.Println("join failed:", err)
		return
	}
	fmt.Println("joined; interface routes:", len(ep.iface.routes), "static routes:", len(ep.joinInfo.StaticRoutes))
}
