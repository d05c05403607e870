// moby/moby daemon/graphdriver/lcow/lcow_svm.go: when hot-adding a VHD to the
// LCOW utility VM fails, serviceVM.hotAddVHDsAtStart (which holds the svm lock)
// rolls back the disks it already attached by calling hotRemoveVHDsAtStart,
// and that function takes the svm lock again.
// Issue moby/moby#36113, fixed in moby/moby#36114.
package main

import (
	"errors"
	"fmt"
	"sync"
)

type MappedVirtualDisk struct {
	HostPath      string
	ContainerPath string
	ReadOnly      bool
}

// utilityVM is the hcsshim container backing the service VM.
type utilityVM interface {
	HotAddVhd(hostPath, containerPath string, readOnly bool) error
	HotRemoveVhd(hostPath string) error
}

type hcsUtilityVM struct{ broken string }

func (u *hcsUtilityVM) HotAddVhd(hostPath, containerPath string, readOnly bool) error {
	if hostPath == u.broken {
		return errors.New("hcsshim::ModifyComputeSystem: the device is not ready")
	}
	return nil
}

func (u *hcsUtilityVM) HotRemoveVhd(hostPath string) error { return nil }

type serviceVM struct {
	sync.Mutex
	config       utilityVM
	attachedVHDs map[string]int
}

func (svm *serviceVM) hotAddVHDsAtStart(mvds ...MappedVirtualDisk) error {
	svm.Lock()
	defer svm.Unlock()
	for i, mvd := range mvds {
		if _, ok := svm.attachedVHDs[mvd.HostPath]; ok {
			svm.attachedVHDs[mvd.HostPath]++
			continue
		}
		if err := svm.config.HotAddVhd(mvd.HostPath, mvd.ContainerPath, mvd.ReadOnly); err != nil {
			svm.hotRemoveVHDsAtStart(mvds[:i]...)
			return fmt.Errorf("failed to hot add %s: %w", mvd.HostPath, err)
		}
		svm.attachedVHDs[mvd.HostPath] = 1
	}
	return nil
}

// hotRemoveVHDsAtStart works the same way as hotRemoveVHDs but does not wait
// for the VM to start.
func (svm *serviceVM) hotRemoveVHDsAtStart(mvds ...MappedVirtualDisk) error {
	svm.Lock()
	defer svm.Unlock()
	var retErr error
	for _, mvd := range mvds {
		n, ok := svm.attachedVHDs[mvd.HostPath]
		if !ok {
			continue
		}
		if n > 1 {
			svm.attachedVHDs[mvd.HostPath]--
			continue
		}
		if err := svm.config.HotRemoveVhd(mvd.HostPath); err != nil {
			retErr = err
			continue
		}
		delete(svm.attachedVHDs, mvd.HostPath)
	}
	return retErr
}

func main() {
	svm := &serviceVM{
		config:       &hcsUtilityVM{broken: `C:\lcow\f6377d75\layer.vhd`},
		attachedVHDs: make(map[string]int),
	}
	layers := []MappedVirtualDisk{
		{HostPath: `C:\lcow\cbf53d93\layer.vhd`, ContainerPath: "/tmp/cbf53d93", ReadOnly: true},
		{HostPath: `C:\lcow\f8deca4f\layer.vhd`, ContainerPath: "/tmp/f8deca4f", ReadOnly: true},
		{HostPath: `C:\lcow\f6377d75\layer.vhd`, ContainerPath: "/tmp/f6377d75", ReadOnly: true},
	}

	var wg sync.WaitGroup
	// Two builds racing to mount their layer chains into the global SVM.
	for _, chain := range [][]MappedVirtualDisk{layers[:2], layers} {
		wg.Add(1)
		go func(chain []MappedVirtualDisk) {
			defer wg.Done()
			if err := svm.hotAddVHDsAtStart(chain...); err != nil {
				fmt.Println("lcow: mount failed:", err)
			}
		}(chain)
	}
	wg.Wait()
	fmt.Println("attached:", len(svm.attachedVHDs))
}
