// Project: nestybox/sysbox-fs (the FUSE/state daemon of the Sysbox container runtime), 2020.
// Files/functions: state/containerDB.go (containerStateService.ContainerPreRegister,
// ContainerRegister, ContainerLookupByProcess, ContainerLookupByInode),
// state/container.go (container.update, container.InitProc),
// ipc/ipc.go (ipcService.ContainerPreRegister / ContainerRegister gRPC
// handlers called by sysbox-runc), domain.ProcessService / ProcessIface.
// Fix: nestybox/sysbox-fs PR #102 "Fix missing unlock in ContainerRegister()".
//
// sysbox-runc registers every system container with sysbox-fs over gRPC:
// pre-registration when the container is created, registration once its
// init process exists. containerStateService embeds a sync.RWMutex that
// guards its id and user-namespace tables. ContainerRegister write-locks it,
// updates the pre-registered entry with the received attributes (which
// creates the init process object through the process service), and reads
// the user-namespace inode of the init process. When that inode cannot be
// read (the init process already died, e.g. a container whose entrypoint
// fails at once), ContainerRegister logs and returns a NotFound error
// without unlocking; every other error path unlocks. From then on every
// FUSE request for /proc or /sys emulation, which looks its container up
// by the requesting process's user namespace (ContainerLookupByProcess ->
// ContainerLookupByInode -> RLock), and every later register/unregister
// blocks: all system containers on the host hang. The fix adds the
// missing css.Unlock() to that return path.
package main

import (
	"errors"
	"fmt"
	"sync"
)

type Inode = uint64

type ProcessIface interface {
	Pid() uint32
	UserNsInode() Inode
}

type ProcessService interface {
	ProcessCreate(pid uint32, uid, gid uint32) ProcessIface
}

type process struct {
	pid   uint32
	alive bool
}

func (p *process) Pid() uint32 { return p.pid }

// UserNsInode reads /proc/<pid>/ns/user; 0 when the process is gone.
func (p *process) UserNsInode() Inode {
	if !p.alive {
		return 0
	}
	return 4026532000 + Inode(p.pid)
}

type processService struct{ exited map[uint32]bool }

func (ps *processService) ProcessCreate(pid uint32, uid, gid uint32) ProcessIface {
	return &process{pid: pid, alive: !ps.exited[pid]}
}

type container struct {
	id       string
	initPid  uint32
	uidFirst uint32
	gidFirst uint32
	initProc ProcessIface
	service  *containerStateService
}

func (c *container) InitProc() ProcessIface { return c.initProc }

func (c *container) update(cntr *container) error {
	c.initPid = cntr.initPid
	c.uidFirst = cntr.uidFirst
	c.gidFirst = cntr.gidFirst
	c.initProc = c.service.prs.ProcessCreate(c.initPid, c.uidFirst, c.gidFirst)
	return nil
}

type containerStateService struct {
	sync.RWMutex
	idTable     map[string]*container
	usernsTable map[Inode]*container
	prs         ProcessService
}

func (css *containerStateService) ContainerPreRegister(id string) error {
	css.Lock()
	if _, ok := css.idTable[id]; ok {
		css.Unlock()
		return fmt.Errorf("container %s already pre-registered", id)
	}
	css.idTable[id] = &container{id: id, service: css}
	css.Unlock()
	return nil
}

func (css *containerStateService) ContainerRegister(cntr *container) error {
	css.Lock()

	currCntr, ok := css.idTable[cntr.id]
	if !ok {
		css.Unlock()
		return fmt.Errorf("container %s not found", cntr.id)
	}
	if err := currCntr.update(cntr); err != nil {
		css.Unlock()
		return fmt.Errorf("container %s not updated", cntr.id)
	}
	usernsInode := currCntr.InitProc().UserNsInode()
	if usernsInode == 0 {
		css.Unlock()
		fmt.Printf("Container registration error: container %s with invalid user-ns\n", cntr.id)
		return fmt.Errorf("container %s missing valid userns inode", cntr.id)
	}
	if _, ok := css.usernsTable[usernsInode]; ok {
		css.Unlock()
		return fmt.Errorf("container %s with userns inode already present", cntr.id)
	}
	css.usernsTable[usernsInode] = currCntr
	css.Unlock()
	return nil
}

func (css *containerStateService) ContainerLookupByInode(usernsInode Inode) *container {
	css.RLock()
	defer css.RUnlock()
	return css.usernsTable[usernsInode]
}

func (css *containerStateService) ContainerLookupByProcess(p ProcessIface) *container {
	return css.ContainerLookupByInode(p.UserNsInode())
}

// ipc service: gRPC handlers invoked by sysbox-runc.
type ipcService struct{ css *containerStateService }

func (ips *ipcService) ContainerRegister(id string, initPid uint32) error {
	cntr := &container{id: id, initPid: initPid, uidFirst: 165536, gidFirst: 165536}
	return ips.css.ContainerRegister(cntr)
}

func main() {
	prs := &processService{exited: map[uint32]bool{4242: true}}
	css := &containerStateService{idTable: map[string]*container{}, usernsTable: map[Inode]*container{}, prs: prs}
	ips := &ipcService{css: css}

	// system container "web" starts normally
	css.ContainerPreRegister("web")
	ips.ContainerRegister("web", 4343)
	// sys container "short" exits before sysbox-runc registers it
	css.ContainerPreRegister("short")
	if err := ips.ContainerRegister("short", 4242); err != nil {
		fmt.Println("register:", err)
	}

	// a FUSE lookup on /proc/uptime from a process inside "web"
	cntr := css.ContainerLookupByProcess(prs.ProcessCreate(4343, 0, 0))
	fmt.Println("lookup found container:", cntr != nil)
	if cntr == nil {
		fmt.Println(errors.New("unexpected lookup miss"))
	}
	fmt.Println("exited cleanly")
}
