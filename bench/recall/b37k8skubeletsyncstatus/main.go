// Project: kubernetes (pkg/kubelet/kubelet.go), master in March 2015
// Issue: kubernetes/kubernetes#5540 "Fix deadlock in kubelet" (deadlock introduced by #5205; the project reverted #5205 in #5542)
//
// The kubelet guards its pod list with podLock, an RWMutex. syncStatus read-locks
// podLock (line 106) for the whole loop over kl.pods and, for every pod, calls
// GetPodStatus (line 111) -> generatePodStatus -> GetPodByFullName, which
// read-locks podLock again (line 74). When the sync loop delivers a pod update in
// between, updatePods queues for the write lock (line 122); the nested RLock then
// waits behind the writer, and the writer waits for syncStatus's first read lock.
// main() runs a status sync while the config source sends a new pod set.
package main

import (
	"fmt"
	"sync"
	"time"
)

type UID string

type Pod struct {
	Name      string
	Namespace string
	UID       UID
}

type PodStatus struct {
	Phase string
	Host  string
}

type PodUpdate struct {
	Pods []Pod
	Op   string
}

func GetPodFullName(pod *Pod) string {
	return fmt.Sprintf("%s_%s", pod.Name, pod.Namespace)
}

type Kubelet struct {
	hostname string

	// Protects the pods array
	// We make complete array copies out of this while locked, which is OK because once added to this array,
	// pods are immutable
	podLock sync.RWMutex
	pods    []Pod

	podStatusesLock sync.RWMutex
	podStatuses     map[string]PodStatus
	sent            []string
}

func findPodByFullName(pods []Pod, podFullName string) (*Pod, bool) {
	for i := range pods {
		if GetPodFullName(&pods[i]) == podFullName {
			return &pods[i], true
		}
	}
	return nil, false
}

// GetPods returns all pods bound to the kubelet and their spec.
func (kl *Kubelet) GetPods() []Pod {
	kl.podLock.RLock()
	defer kl.podLock.RUnlock()
	return append([]Pod{}, kl.pods...)
}

// GetPodByFullName provides the first pod that matches namespace and name, as well
// as whether the pod was found.
func (kl *Kubelet) GetPodByFullName(podFullName string) (*Pod, bool) {
	kl.podLock.RLock()
	defer kl.podLock.RUnlock()
	return findPodByFullName(kl.pods, podFullName)
}

func (kl *Kubelet) getPodStatusFromCache(podFullName string) (PodStatus, bool) {
	kl.podStatusesLock.RLock()
	defer kl.podStatusesLock.RUnlock()
	status, ok := kl.podStatuses[podFullName]
	return status, ok
}

func (kl *Kubelet) generatePodStatus(podFullName string, uid UID) (PodStatus, error) {
	pod, found := kl.GetPodByFullName(podFullName)
	if !found {
		return PodStatus{}, fmt.Errorf("couldn't find pod %q", podFullName)
	}
	// dockertools.GetDockerPodInfo(kl.dockerClient, *pod.Spec, podFullName, uid) ...
	return PodStatus{Phase: "Running", Host: kl.hostname + "/" + pod.Name}, nil
}

// GetPodStatus returns information from Docker about the containers in a pod
func (kl *Kubelet) GetPodStatus(podFullName string, uid UID) (PodStatus, error) {
	// Check to see if we have a cached version of the status.
	if cached, found := kl.getPodStatusFromCache(podFullName); found {
		return cached, nil
	}
	return kl.generatePodStatus(podFullName, uid)
}

// syncStatus pushes the status of every pod to the apiserver.
func (kl *Kubelet) syncStatus() {
	kl.podLock.RLock()
	defer kl.podLock.RUnlock()
	for _, pod := range kl.pods {
		podFullName := GetPodFullName(&pod)
		time.Sleep(20 * time.Millisecond) // kubeClient.Pods(ns).UpdateStatus(...) for the previous pod
		status, err := kl.GetPodStatus(podFullName, pod.UID)
		if err != nil {
			fmt.Println("unable to get status for pod", podFullName, err)
			continue
		}
		kl.sent = append(kl.sent, podFullName+"="+status.Phase)
	}
}

// updatePods applies a pod update from the config sources.
func (kl *Kubelet) updatePods(u PodUpdate) {
	kl.podLock.Lock()
	defer kl.podLock.Unlock()
	switch u.Op {
	case "SET":
		kl.pods = u.Pods
	case "UPDATE":
		for _, p := range u.Pods {
			if old, ok := findPodByFullName(kl.pods, GetPodFullName(&p)); ok {
				*old = p
			}
		}
	}
}

func main() {
	kl := &Kubelet{
		hostname:    "minion-1",
		pods:        []Pod{{Name: "nginx", Namespace: "default", UID: "u1"}, {Name: "redis", Namespace: "default", UID: "u2"}},
		podStatuses: map[string]PodStatus{},
	}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// syncLoop: the apiserver source sends a new set of pods.
		time.Sleep(10 * time.Millisecond)
		kl.updatePods(PodUpdate{Op: "SET", Pods: append(kl.GetPods(), Pod{Name: "web", Namespace: "default", UID: "u3"})})
	}()

	kl.syncStatus()
	wg.Wait()
	fmt.Println("status sent:", kl.sent, "pods:", len(kl.GetPods()))
}
