// Project: dolthub/dolt (go/libraries/doltcore/sqle/cluster/mysqldb_persister.go, interceptors.go, controller.go), users and grants replication in sql-server cluster mode, 1.16/1.17, September 2023.
// Bug: mysqlDbReplica.Run kept the replica mutex r.mu held while it called UpdateUsersAndGrants on the standby; the client interceptor on that call sees that the standby now claims to be primary at a higher epoch and calls Controller.setRoleAndEpoch, which takes the controller mutex and tells the users-and-grants persister to become standby through mysqlDbReplica.setRole, which locks r.mu again on the same goroutine, so replication and every later role change hang (PR #6752 "Fix a possible deadlock in permissions replication"; the fix releases r.mu around the RPC, the pre-fix loop is reconstructed and approximate).
package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

type Role string

const (
	RolePrimary Role = "primary"
	RoleStandby Role = "standby"
)

type metadataMD map[string]string

type UpdateUsersAndGrantsRequest struct{ SerializedContents []byte }

type unaryInvoker func(ctx context.Context, method string, req any, header metadataMD) error

// clientinterceptor watches standby response headers (see interceptors.go).
type clientinterceptor struct {
	roleSetter func(role string, epoch int)
	role       Role
	epoch      int
	mu         sync.Mutex
}

func (ci *clientinterceptor) setRole(role Role, epoch int) {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	ci.role, ci.epoch = role, epoch
}

func (ci *clientinterceptor) getRole() (Role, int) {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	return ci.role, ci.epoch
}

func (ci *clientinterceptor) Unary(ctx context.Context, method string, req any, invoker unaryInvoker) error {
	if role, _ := ci.getRole(); role == RoleStandby {
		return errors.New("cluster: clientinterceptor: this server is a standby")
	}
	header := metadataMD{}
	err := invoker(ctx, method, req, header)
	ci.handleResponseHeaders(header)
	return err
}

func (ci *clientinterceptor) handleResponseHeaders(header metadataMD) {
	role, epoch := ci.getRole()
	if role != RolePrimary {
		return
	}
	respEpoch, err := strconv.Atoi(header["x-dolt-cluster-role-epoch"])
	if err == nil && header["x-dolt-cluster-role"] == string(RolePrimary) && respEpoch > epoch {
		ci.roleSetter(string(RoleStandby), respEpoch)
	}
}

// replicationServiceClient is the generated gRPC client behind the interceptor chain.
type replicationServiceClient struct {
	remote      string
	interceptor *clientinterceptor
	standbyRole Role
	standbyEpo  int
}

func (c *replicationServiceClient) UpdateUsersAndGrants(ctx context.Context, in *UpdateUsersAndGrantsRequest) error {
	return c.interceptor.Unary(ctx, "/ReplicationService/UpdateUsersAndGrants", in,
		func(ctx context.Context, method string, req any, header metadataMD) error {
			header["x-dolt-cluster-role"] = string(c.standbyRole)
			header["x-dolt-cluster-role-epoch"] = strconv.Itoa(c.standbyEpo)
			if c.standbyRole == RolePrimary {
				return errors.New("this server is a primary and is not currently accepting replication")
			}
			return nil
		})
}

type mysqlDbReplica struct {
	client            *replicationServiceClient
	cond              *sync.Cond
	role              Role
	contents          []byte
	mu                sync.Mutex
	version           uint32
	replicatedVersion uint32
	shutdown          bool
}

func (r *mysqlDbReplica) UpdateMySQLDb(contents []byte, version uint32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.contents, r.version = contents, version
	r.cond.Broadcast()
}

func (r *mysqlDbReplica) Run() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for !r.shutdown {
		if r.role != RolePrimary || r.version == 0 || r.replicatedVersion == r.version {
			r.cond.Wait()
			continue
		}
		// We do not call into the client with the lock held here.
		// Client interceptors could call
		// `controller.setRoleAndEpoch()`, which will call back
		// into this replica with the new role. We need to
		// release this lock in order to avoid deadlock.
		contents := r.contents
		client := r.client
		version := r.version
		r.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		err := client.UpdateUsersAndGrants(ctx, &UpdateUsersAndGrantsRequest{SerializedContents: contents})
		cancel()
		r.mu.Lock()
		if err != nil {
			fmt.Printf("mysqlDbReplica[%s]: error replicating users and grants. backing off. %v\n", client.remote, err)
			continue
		}
		r.replicatedVersion = version
	}
}

func (r *mysqlDbReplica) setRole(role Role) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.role = role
	r.cond.Broadcast()
}

func (r *mysqlDbReplica) GracefulStop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.shutdown = true
	r.cond.Broadcast()
}

type replicatingMySQLDbPersister struct {
	current  []byte
	replicas []*mysqlDbReplica
	mu       sync.Mutex
	version  uint32
}

func (p *replicatingMySQLDbPersister) setRole(role Role) {
	for _, r := range p.replicas {
		r.setRole(role)
	}
}

func (p *replicatingMySQLDbPersister) Persist(data []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.current = data
	p.version++
	for _, r := range p.replicas {
		r.UpdateMySQLDb(p.current, p.version)
	}
}

type Controller struct {
	mu           sync.Mutex
	role         Role
	epoch        int
	cinterceptor *clientinterceptor
	mysqlDb      *replicatingMySQLDbPersister
}

func (c *Controller) setRoleAndEpoch(role string, epoch int, graceful bool) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if epoch < c.epoch {
		return false, fmt.Errorf("error assuming role '%s' at epoch %d; already at epoch %d", role, epoch, c.epoch)
	}
	changedrole := role != string(c.role)
	c.role, c.epoch = Role(role), epoch
	c.cinterceptor.setRole(c.role, c.epoch)
	if changedrole {
		c.mysqlDb.setRole(c.role)
	}
	return changedrole, nil
}

func (c *Controller) roleAndEpoch() (Role, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.role, c.epoch
}

func main() {
	c := &Controller{role: RolePrimary, epoch: 1}
	c.cinterceptor = &clientinterceptor{role: RolePrimary, epoch: 1, roleSetter: func(role string, epoch int) {
		c.setRoleAndEpoch(role, epoch, false)
	}}
	// The configured standby was promoted by an operator at epoch 2.
	client := &replicationServiceClient{remote: "standby1", interceptor: c.cinterceptor, standbyRole: RolePrimary, standbyEpo: 2}
	replica := &mysqlDbReplica{client: client, role: RolePrimary}
	replica.cond = sync.NewCond(&replica.mu)
	c.mysqlDb = &replicatingMySQLDbPersister{replicas: []*mysqlDbReplica{replica}}

	runDone := make(chan struct{})
	go func() {
		replica.Run()
		close(runDone)
	}()
	c.mysqlDb.Persist([]byte("CREATE USER 'app'@'%'")) // CREATE USER on the old primary
	time.Sleep(200 * time.Millisecond)
	replica.GracefulStop()
	<-runDone
	role, epoch := c.roleAndEpoch()
	fmt.Println("role now:", role, "epoch:", epoch)
}
