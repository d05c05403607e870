// Fixed version (exporter built outside metricsMux, as in PRs #1271/#2031).
// Project: knative/pkg (shared library of Knative Serving/Eventing
// controllers), late 2019 - 2020 (v0.10 onwards, once the Stackdriver
// exporter could read its credentials from a Kubernetes Secret).
// Files: metrics/exporter.go (UpdateExporter, newMetricsExporter,
// getCurMetricsConfig, metricsMux), metrics/stackdriver_exporter.go
// (newStackdriverExporter, getStackdriverSecret), metrics/client.go
// (ClientProvider latency metric registered as client-go's
// k8s.io/client-go/tools/metrics RequestLatency hook), metrics/record.go (Record).
// Issue: knative/pkg#807 "Potential deadlock in knative.dev/pkg/metrics when
// using k8s.io/client-go/kubernetes"; worked around by PR #1271 ("Make
// updating metrics config and metrics exporter atomic") and fixed for good by
// PR #2031 ("Fix potential deadlock when k8s client is used").
//
// UpdateExporter write-locks metricsMux to swap the current metrics config
// and exporter. Building a Stackdriver exporter reads the GCP credentials
// Secret through the kube client. Knative registered its own ClientProvider
// as client-go's request-latency hook, so every REST request made by that
// kube client ends in latencyMetric.Observe -> metrics.Record, and Record
// starts with getCurMetricsConfig(), which read-locks metricsMux. The
// controller goroutine that reloads config-observability therefore blocks on
// the metricsMux it already holds, and every other goroutine that records a
// metric queues behind it. The fix creates the exporter (and reads the
// Secret) before metricsMux is taken and only swaps the pointers under it.
package main

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"time"
)

// ---- k8s.io/client-go/tools/metrics ----

type LatencyMetric interface {
	Observe(verb string, u url.URL, latency time.Duration)
}

type noopLatency struct{}

func (noopLatency) Observe(string, url.URL, time.Duration) {}

var RequestLatency LatencyMetric = noopLatency{}

type RegisterOpts struct{ RequestLatency LatencyMetric }

func Register(opts RegisterOpts) {
	if opts.RequestLatency != nil {
		RequestLatency = opts.RequestLatency
	}
}

// ---- k8s.io/client-go/rest and typed core/v1 client ----

type Request struct {
	verb string
	path string
}

func (r *Request) Do(ctx context.Context) (map[string][]byte, error) {
	start := time.Now()
	u := url.URL{Scheme: "https", Host: "10.96.0.1", Path: r.path}
	defer func() { RequestLatency.Observe(r.verb, u, time.Since(start)) }()
	return map[string][]byte{"key.json": []byte(`{"type":"service_account"}`)}, nil
}

type SecretInterface struct{ namespace string }

func (s SecretInterface) Get(ctx context.Context, name string) (map[string][]byte, error) {
	req := &Request{verb: "GET", path: "/api/v1/namespaces/" + s.namespace + "/secrets/" + name}
	return req.Do(ctx)
}

type kubeClient struct{}

func (kubeClient) Secrets(namespace string) SecretInterface {
	return SecretInterface{namespace: namespace}
}

// ---- knative.dev/pkg/metrics ----

type metricsConfig struct {
	domain             string
	component          string
	backendDestination string
	secretName         string
}

type exporter struct{ name string }

var (
	curMetricsExporter *exporter
	curMetricsConfig   *metricsConfig
	metricsMux         sync.RWMutex

	kubeclient = kubeClient{}
)

func getCurMetricsConfig() *metricsConfig {
	metricsMux.RLock()
	defer metricsMux.RUnlock()
	return curMetricsConfig
}

// Record records the measurement if the current backend accepts it.
func Record(ctx context.Context, name string, value float64) {
	mc := getCurMetricsConfig()
	if mc == nil {
		return
	}
	_ = fmt.Sprintf("%s/%s %s=%v", mc.domain, mc.component, name, value)
}

// ClientProvider produces latency metrics suitable for client-go's metrics.Register.
type ClientProvider struct{ Latency string }

func (cp *ClientProvider) NewLatencyMetric() LatencyMetric { return latencyMetric{measure: cp.Latency} }

type latencyMetric struct{ measure string }

func (m latencyMetric) Observe(verb string, u url.URL, t time.Duration) {
	Record(context.Background(), m.measure, t.Seconds())
}

func getStackdriverSecret(secretName string) (map[string][]byte, error) {
	return kubeclient.Secrets("knative-serving").Get(context.Background(), secretName)
}

func newStackdriverExporter(config *metricsConfig) (*exporter, error) {
	secret, err := getStackdriverSecret(config.secretName)
	if err != nil {
		return nil, err
	}
	return &exporter{name: fmt.Sprintf("stackdriver(%d key files)", len(secret))}, nil
}

func newMetricsExporter(config *metricsConfig) (*exporter, error) {
	switch config.backendDestination {
	case "stackdriver":
		return newStackdriverExporter(config)
	default:
		return &exporter{name: "prometheus"}, nil
	}
}

func isNewExporterRequired(newConfig *metricsConfig) bool {
	cc := getCurMetricsConfig()
	return cc == nil || newConfig.backendDestination != cc.backendDestination
}

// UpdateExporter updates the exporter based on the given ExporterOptions.
// The exporter is created (which may use the kube client, whose latency hook
// records through this package) before metricsMux is taken; only the swap of
// config and exporter happens under the lock.
func UpdateExporter(newConfig *metricsConfig) error {
	var e *exporter
	if isNewExporterRequired(newConfig) {
		var err error
		if e, err = newMetricsExporter(newConfig); err != nil {
			return err
		}
	}

	metricsMux.Lock()
	defer metricsMux.Unlock()
	if e != nil {
		curMetricsExporter = e
	}
	curMetricsConfig = newConfig
	return nil
}

func main() {
	cp := &ClientProvider{Latency: "client_latency"}
	Register(RegisterOpts{RequestLatency: cp.NewLatencyMetric()})

	// Controller start-up: config-observability says prometheus.
	if err := UpdateExporter(&metricsConfig{domain: "knative.dev/serving", component: "controller", backendDestination: "prometheus"}); err != nil {
		panic(err)
	}
	// The ConfigMap watcher sees metrics.backend-destination: stackdriver.
	if err := UpdateExporter(&metricsConfig{domain: "knative.dev/serving", component: "controller",
		backendDestination: "stackdriver", secretName: "stackdriver-service-account-key"}); err != nil {
		panic(err)
	}
	fmt.Println("exporter:", curMetricsExporter.name)
}
