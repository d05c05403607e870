// Project: kubernetes (kubelet volume manager, pkg/kubelet/volumemanager/cache,
// actual_state_of_world.go).
//
// Bug (approximate): actualStateOfWorld.GetMountedVolumesForPod took asw.RLock()
// and, while building each MountedVolume (getMountedVolume -> devicePathFor ->
// GetVolumeDevicePath), called a public accessor that took asw.RLock() a second
// time. When the reconciler goroutine called MarkVolumeAsMounted (asw.Lock())
// between the two read locks, Go's RWMutex made the second RLock wait behind the
// pending writer while the writer waited for the first RLock: the kubelet volume
// manager (and every pod waiting in WaitForAttachAndMount) hung.
// Fix: internal helpers read the map directly and assume the caller holds the lock.
package kubeasw

import (
	"sync"
	"testing"
	"time"
)

type (
	UniqueVolumeName string
	UniquePodName    string
)

type mountedPod struct {
	podName             UniquePodName
	outerVolumeSpecName string
	volumeMounted       bool
}

type attachedVolume struct {
	volumeName         UniqueVolumeName
	mountedPods        map[UniquePodName]mountedPod
	devicePath         string
	deviceMountPath    string
	globallyMounted    bool
	pluginIsAttachable bool
}

// MountedVolume is what the volume manager hands out to the kubelet.
type MountedVolume struct {
	PodName             UniquePodName
	VolumeName          UniqueVolumeName
	OuterVolumeSpecName string
	DevicePath          string
	MountOptions        []string
}

type actualStateOfWorld struct {
	nodeName        string
	attachedVolumes map[UniqueVolumeName]attachedVolume
	sync.RWMutex
}

func NewActualStateOfWorld(nodeName string) *actualStateOfWorld {
	return &actualStateOfWorld{
		nodeName:        nodeName,
		attachedVolumes: make(map[UniqueVolumeName]attachedVolume),
	}
}

func (asw *actualStateOfWorld) MarkVolumeAsAttached(volumeName UniqueVolumeName, devicePath string) {
	asw.Lock()
	defer asw.Unlock()
	asw.attachedVolumes[volumeName] = attachedVolume{
		volumeName:         volumeName,
		mountedPods:        make(map[UniquePodName]mountedPod),
		devicePath:         devicePath,
		pluginIsAttachable: true,
	}
}

// MarkVolumeAsMounted is called by the reconciler after a successful SetUp.
func (asw *actualStateOfWorld) MarkVolumeAsMounted(podName UniquePodName, volumeName UniqueVolumeName, outerVolumeSpecName string) {
	asw.Lock() // DEADLOCK HERE (reconciler: Lock waits for the first RLock)
	defer asw.Unlock()
	vol, ok := asw.attachedVolumes[volumeName]
	if !ok {
		return
	}
	vol.mountedPods[podName] = mountedPod{
		podName:             podName,
		outerVolumeSpecName: outerVolumeSpecName,
		volumeMounted:       true,
	}
	asw.attachedVolumes[volumeName] = vol
}

// GetVolumeDevicePath is a public accessor used by the operation executor.
func (asw *actualStateOfWorld) GetVolumeDevicePath(volumeName UniqueVolumeName) string {
	asw.RLock() // DEADLOCK HERE (second RLock on the GetMountedVolumesForPod path, writer pending)
	defer asw.RUnlock()
	return asw.attachedVolumes[volumeName].devicePath
}

// GetMountedVolumesForPod is called by the volume manager (e.g. from
// WaitForAttachAndMount / GetMountedVolumesForPod in volume_manager.go).
func (asw *actualStateOfWorld) GetMountedVolumesForPod(podName UniquePodName) []MountedVolume {
	asw.RLock()
	defer asw.RUnlock()
	var mounted []MountedVolume
	for _, vol := range asw.attachedVolumes {
		if mv, ok := asw.getMountedVolume(vol, podName); ok {
			mounted = append(mounted, mv)
		}
	}
	return mounted
}

func (asw *actualStateOfWorld) getMountedVolume(vol attachedVolume, podName UniquePodName) (MountedVolume, bool) {
	mp, ok := vol.mountedPods[podName]
	if !ok || !mp.volumeMounted {
		return MountedVolume{}, false
	}
	opts := readMountOptions(vol.volumeName)
	return MountedVolume{
		PodName:             podName,
		VolumeName:          vol.volumeName,
		OuterVolumeSpecName: mp.outerVolumeSpecName,
		DevicePath:          asw.devicePathFor(vol),
		MountOptions:        opts,
	}, true
}

func (asw *actualStateOfWorld) devicePathFor(vol attachedVolume) string {
	if !vol.pluginIsAttachable {
		return ""
	}
	return asw.GetVolumeDevicePath(vol.volumeName)
}

// readMountOptions stands in for parsing /proc/self/mountinfo: slow.
func readMountOptions(UniqueVolumeName) []string {
	time.Sleep(50 * time.Millisecond)
	return []string{"rw", "relatime"}
}

// reconciler is the volume manager's reconciler loop (one iteration).
type reconciler struct {
	actualStateOfWorld *actualStateOfWorld
}

func (rc *reconciler) reconcile(podName UniquePodName, volumeName UniqueVolumeName) {
	// ... MountVolume operation succeeded ...
	rc.actualStateOfWorld.MarkVolumeAsMounted(podName, volumeName, "data")
}

func TestGetMountedVolumesForPodWhileReconcilerMounts(t *testing.T) {
	asw := NewActualStateOfWorld("node-1")
	asw.MarkVolumeAsAttached("kubernetes.io/aws-ebs/vol-1", "/dev/xvdb")
	asw.MarkVolumeAsMounted("pod-a", "kubernetes.io/aws-ebs/vol-1", "data")
	rc := &reconciler{actualStateOfWorld: asw}

	var wg sync.WaitGroup
	wg.Add(2)
	var got []MountedVolume
	go func() { // kubelet syncPod -> volumeManager.GetMountedVolumesForPod
		defer wg.Done()
		got = asw.GetMountedVolumesForPod("pod-a")
	}()
	time.AfterFunc(10*time.Millisecond, func() { // reconciler tick
		defer wg.Done()
		rc.reconcile("pod-b", "kubernetes.io/aws-ebs/vol-1")
	})
	wg.Wait()

	if len(got) != 1 || got[0].DevicePath != "/dev/xvdb" {
		t.Fatalf("unexpected mounted volumes: %+v", got)
	}
}
