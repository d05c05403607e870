// Project: aws/amazon-ecs-agent, v1.14.2 (June 2017).
// Files/functions: agent/engine/docker_image_manager.go (dockerImageManager.removeUnusedImages,
// removeLeastRecentlyUsedImage, RecordContainerReference,
// addContainerReferenceToExistingImageState, getImageState,
// removeExistingImageNameOfDifferentID), agent/engine/docker_task_engine.go
// (DockerTaskEngine.pullContainer), package-level ImagePullDeleteLock.
// Issue: aws/amazon-ecs-agent#833 "1.14.2 causing container instances to grind to a halt";
// fix: PR #836 "Fix the deadlock caused by the ImagePullDeleteLock" (released in 1.14.3).
//
// The automated image cleanup goroutine runs removeUnusedImages, which takes
// the image manager's updateLock for writing, builds the map of candidate
// images and then, for each image to delete, calls
// removeLeastRecentlyUsedImage, which takes the global ImagePullDeleteLock so
// that no pull of the same image runs while it is removed. The task engine
// pulls images in pullContainer holding ImagePullDeleteLock for the whole
// pull, and once the pull is done it records the container's reference
// through ImageManager.RecordContainerReference, whose helper
// addContainerReferenceToExistingImageState read-locks updateLock. Cleanup
// holds updateLock and waits for ImagePullDeleteLock; the pull holds
// ImagePullDeleteLock and waits for updateLock. Every later task start on
// the instance then blocks. The fix takes ImagePullDeleteLock in
// removeUnusedImages before updateLock, so both paths take the two locks in
// the same order.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

var ImagePullDeleteLock sync.Mutex

type Container struct {
	Name    string
	Image   string
	ImageID string
}

type Image struct {
	ImageID string
	Names   []string
}

type ImageState struct {
	Image      *Image
	Containers []*Container
	PulledAt   time.Time
	lock       sync.RWMutex
}

func (s *ImageState) UpdateImageState(c *Container) {
	s.lock.Lock()
	defer s.lock.Unlock()
	s.Containers = append(s.Containers, c)
}

type ImageManager interface {
	RecordContainerReference(container *Container) error
	StartImageCleanupProcess()
}

type DockerClient interface {
	PullImage(image string) error
	InspectImage(image string) (*Image, error)
	RemoveImage(imageName string) error
}

type dockerImageManager struct {
	imageStates                      []*ImageState
	client                           DockerClient
	updateLock                       sync.RWMutex
	imageStatesConsideredForDeletion map[string]*ImageState
	numImagesToDelete                int
}

func (imageManager *dockerImageManager) RecordContainerReference(container *Container) error {
	imageInspected, err := imageManager.client.InspectImage(container.Image)
	if err != nil {
		return err
	}
	container.ImageID = imageInspected.ID()
	if !imageManager.addContainerReferenceToExistingImageState(container) {
		return errors.New("image state not found")
	}
	return nil
}

func (imageManager *dockerImageManager) addContainerReferenceToExistingImageState(container *Container) bool {
	// this lock is used for reading the image states in the image manager
	imageManager.updateLock.RLock()
	defer imageManager.updateLock.RUnlock()
	imageManager.removeExistingImageNameOfDifferentID(container.Image, container.ImageID)
	imageState, ok := imageManager.getImageState(container.ImageID)
	if ok {
		imageState.UpdateImageState(container)
	}
	return ok
}

func (imageManager *dockerImageManager) removeExistingImageNameOfDifferentID(name, id string) {}

func (imageManager *dockerImageManager) getImageState(id string) (*ImageState, bool) {
	for _, s := range imageManager.imageStates {
		if s.Image.ImageID == id {
			return s, true
		}
	}
	return nil, false
}

func (imageManager *dockerImageManager) StartImageCleanupProcess() {
	imageManager.removeUnusedImages()
}

func (imageManager *dockerImageManager) removeUnusedImages() {
	imageManager.updateLock.Lock()
	defer imageManager.updateLock.Unlock()
	imageManager.imageStatesConsideredForDeletion = make(map[string]*ImageState)
	for _, s := range imageManager.imageStates {
		imageManager.imageStatesConsideredForDeletion[s.Image.ImageID] = s
	}
	for i := 0; i < imageManager.numImagesToDelete; i++ {
		if err := imageManager.removeLeastRecentlyUsedImage(); err != nil {
			break
		}
	}
}

func (imageManager *dockerImageManager) removeLeastRecentlyUsedImage() error {
	ImagePullDeleteLock.Lock()
	defer ImagePullDeleteLock.Unlock()
	for id, s := range imageManager.imageStatesConsideredForDeletion {
		if len(s.Containers) == 0 {
			delete(imageManager.imageStatesConsideredForDeletion, id)
			return imageManager.client.RemoveImage(s.Image.Names[0])
		}
	}
	return errors.New("no more eligible images for deletion")
}

func (i *Image) ID() string { return i.ImageID }

type fakeDocker struct{}

func (fakeDocker) PullImage(image string) error {
	time.Sleep(100 * time.Millisecond) // registry round trips
	return nil
}
func (fakeDocker) InspectImage(image string) (*Image, error) {
	return &Image{ImageID: "sha256:" + image, Names: []string{image}}, nil
}
func (fakeDocker) RemoveImage(string) error { return nil }

type DockerTaskEngine struct {
	client       DockerClient
	imageManager ImageManager
}

func (engine *DockerTaskEngine) pullContainer(container *Container) error {
	// Acquire the image pull delete lock for the pull and the bookkeeping.
	ImagePullDeleteLock.Lock()
	defer ImagePullDeleteLock.Unlock()
	if err := engine.client.PullImage(container.Image); err != nil {
		return err
	}
	return engine.imageManager.RecordContainerReference(container)
}

func main() {
	im := &dockerImageManager{client: fakeDocker{}, numImagesToDelete: 2}
	im.imageStates = []*ImageState{
		{Image: &Image{ImageID: "sha256:nginx", Names: []string{"nginx"}}},
		{Image: &Image{ImageID: "sha256:old", Names: []string{"old"}}},
	}
	engine := &DockerTaskEngine{client: fakeDocker{}, imageManager: im}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		engine.pullContainer(&Container{Name: "web", Image: "nginx"})
	}()
	time.Sleep(20 * time.Millisecond)
	go func() { // the cleanup ticker fires during the pull
		defer wg.Done()
		im.StartImageCleanupProcess()
	}()
	wg.Wait()
	fmt.Println("exited cleanly")
}
