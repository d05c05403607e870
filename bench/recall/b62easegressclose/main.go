// easegress-io/easegress #280 ("[Mesh] fixing deadlock and optimizing mesh
// controller's master"): after the mesh controller spec is updated, the
// sidecar worker closes and rebuilds its ingress/egress servers.
// IngressServer.Close write-locks the server and asks Ready(), which
// read-locks the same RWMutex; the worker hangs and, behind it, every request
// the ingress HTTP server routes through Get(). The sidecar stays pending.
package main

import (
	"fmt"
	"sync"
	"time"
)

type HTTPPipeline struct {
	name   string
	closed bool
}

func (p *HTTPPipeline) Close() { p.closed = true }

// MuxMapper lets the HTTP server find the pipeline for a request.
type MuxMapper interface {
	Get(name string) (*HTTPPipeline, bool)
}

type HTTPServer struct {
	mux     MuxMapper
	stopped bool
}

func (s *HTTPServer) handle(pipeline string) string {
	if p, ok := s.mux.Get(pipeline); ok {
		return "200 via " + p.name
	}
	return "503"
}

func (s *HTTPServer) Close() { s.stopped = true }

func genIngressPipelineObjectName(svc string) string { return "mesh-ingress-" + svc + "-pipeline" }

type IngressServer struct {
	serviceName string
	port        uint32
	mutex       sync.RWMutex
	pipelines   map[string]*HTTPPipeline
	httpServer  *HTTPServer
}

func NewIngressServer(serviceName string) *IngressServer {
	return &IngressServer{serviceName: serviceName, pipelines: map[string]*HTTPPipeline{}}
}

// Get implements MuxMapper for the ingress HTTP server.
func (ings *IngressServer) Get(name string) (*HTTPPipeline, bool) {
	ings.mutex.RLock()
	defer ings.mutex.RUnlock()
	p, ok := ings.pipelines[name]
	return p, ok
}

// Ready checks whether the ingress pipeline and HTTP server are created.
func (ings *IngressServer) Ready() bool {
	ings.mutex.RLock()
	defer ings.mutex.RUnlock()
	return ings._ready()
}

func (ings *IngressServer) _ready() bool {
	_, ok := ings.pipelines[genIngressPipelineObjectName(ings.serviceName)]
	return ok && ings.httpServer != nil
}

func (ings *IngressServer) CreateIngress(port uint32) {
	ings.mutex.Lock()
	defer ings.mutex.Unlock()
	name := genIngressPipelineObjectName(ings.serviceName)
	if _, ok := ings.pipelines[name]; !ok {
		ings.pipelines[name] = &HTTPPipeline{name: name}
	}
	if ings.httpServer == nil {
		ings.httpServer = &HTTPServer{mux: ings}
	}
	ings.port = port
}

// Close closes the ingress pipeline and HTTP server.
func (ings *IngressServer) Close() {
	ings.mutex.Lock()
	defer ings.mutex.Unlock()
	if ings.Ready() {
		ings.httpServer.Close()
		for _, p := range ings.pipelines {
			p.Close()
		}
	}
	ings.pipelines = map[string]*HTTPPipeline{}
	ings.httpServer = nil
}

// Worker is the mesh sidecar worker of one service instance.
type Worker struct {
	serviceName   string
	ingressServer *IngressServer
}

// onMeshSpecUpdate rebuilds the servers from the new mesh controller spec.
func (w *Worker) onMeshSpecUpdate(port uint32) {
	w.ingressServer.Close()
	w.ingressServer.CreateIngress(port)
}

func main() {
	w := &Worker{serviceName: "order", ingressServer: NewIngressServer("order")}
	w.ingressServer.CreateIngress(8080)

	ready := w.ingressServer.Ready()
	srv := w.ingressServer.httpServer
	go func() { // traffic from other services in the mesh
		for i := 0; i < 5; i++ {
			srv.handle(genIngressPipelineObjectName("order"))
			time.Sleep(10 * time.Millisecond)
		}
	}()
	time.Sleep(15 * time.Millisecond)

	w.onMeshSpecUpdate(9090) // egctl apply -f mesh-controller.yaml
	fmt.Printf("ingress was ready=%v, rebuilt on port %d, ready=%v\n", ready, w.ingressServer.port, w.ingressServer.Ready())
}
