// Command benchcorpus only imports the packages that confinelint's
// benchmark vets; it is never run.
package main

import (
	_ "github.com/IBM/sarama"
	_ "github.com/IBM/sarama/mocks"
	_ "github.com/twmb/franz-go/pkg/kgo"
	_ "github.com/twmb/franz-go/pkg/kversion"
	_ "github.com/twmb/franz-go/pkg/sasl/aws"
	_ "github.com/twmb/franz-go/pkg/sasl/oauth"
	_ "github.com/twmb/franz-go/pkg/sasl/plain"
	_ "github.com/twmb/franz-go/pkg/sasl/scram"
	_ "go.etcd.io/etcd/server/v3/etcdmain"
	_ "go.etcd.io/etcd/server/v3/mock/mockstorage"
	_ "go.etcd.io/etcd/server/v3/mock/mockstore"
	_ "go.etcd.io/etcd/server/v3/mock/mockwait"
	_ "go.etcd.io/etcd/server/v3/storage/backend/testing"
	_ "go.etcd.io/etcd/server/v3/storage/mvcc/testutil"
	_ "go.etcd.io/etcd/server/v3/storage/wal/testing"
	_ "go.etcd.io/raft/v3"
	_ "go.etcd.io/raft/v3/rafttest"
)

func main() {}
