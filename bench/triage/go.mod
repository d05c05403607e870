module triagecorpus

go 1.26.7

require (
	github.com/IBM/sarama v1.61.1
	github.com/cockroachdb/pebble v1.1.5
	github.com/containerd/containerd/v2 v2.4.2
	github.com/ethereum/go-ethereum v1.17.10
	github.com/prometheus/prometheus v0.316.0
	github.com/syncthing/syncthing v1.30.0
	github.com/twmb/franz-go v1.22.3
	go.etcd.io/etcd/server/v3 v3.7.3
	go.etcd.io/raft/v3 v3.7.0
	k8s.io/client-go v0.37.2
)
