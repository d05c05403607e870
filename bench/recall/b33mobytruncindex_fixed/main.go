// Project: moby/moby (Docker 1.8.0-rc1: pkg/truncindex/truncindex.go, graph/graph.go)
// Issue: moby/moby#15205 "docker-engine deadlocks under concurrent operations", fixed by moby/moby#15207
//
// FIXED (moby#15207): Iterate no longer takes the index lock (as before the
// 1.8 change), so the handler's Get is the only reader.
//
// Line numbers in the paragraph below refer to the probe, b33mobytruncindex/main.go.
//
// Bug: TruncIndex.Iterate (added for graph.walkAll in the 1.8 cycle, #13992)
// read-locks the index (idx.RLock(), line 160) for the whole trie walk and
// calls the handler for every ID. graph.walkAll's handler calls graph.Get,
// which resolves the ID through TruncIndex.Get, which read-locks the same
// RWMutex again (idx.RLock(), line 147). When a writer (an image being
// registered by a concurrent pull: Graph.Register -> TruncIndex.Add ->
// idx.Lock(), line 120) queues between the two read locks, the nested RLock
// waits for the writer and the writer waits for the outer read lock:
// "docker images" and "docker pull" hang forever.
//
// The image driver's DiffSize (an interface call made by Graph.Get for an
// image without a stored size) is where the walk is while the pull starts.
package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var (
	ErrEmptyPrefix     = errors.New("Prefix can't be empty")
	ErrAmbiguousPrefix = errors.New("Multiple IDs found with provided prefix")
	ErrIllegalChar     = errors.New("illegal character: ' '")
)

// Trie stands in for github.com/tchap/go-patricia/patricia.Trie (ordered
// prefix tree), reduced to a sorted slice.
type Trie struct {
	items []string
}

type Item interface{}
type Prefix []byte

type VisitorFunc func(prefix Prefix, item Item) error

func NewTrie() *Trie { return &Trie{} }

func (t *Trie) Insert(key Prefix, item Item) bool {
	s := string(key)
	i := sort.SearchStrings(t.items, s)
	if i < len(t.items) && t.items[i] == s {
		return false
	}
	items := make([]string, 0, len(t.items)+1)
	items = append(items, t.items[:i]...)
	items = append(items, s)
	items = append(items, t.items[i:]...)
	t.items = items
	return true
}

func (t *Trie) Visit(visitor VisitorFunc) error {
	for _, s := range t.items {
		if err := visitor(Prefix(s), struct{}{}); err != nil {
			return err
		}
	}
	return nil
}

func (t *Trie) VisitSubtree(prefix Prefix, visitor VisitorFunc) error {
	for _, s := range t.items {
		if strings.HasPrefix(s, string(prefix)) {
			if err := visitor(Prefix(s), struct{}{}); err != nil {
				return err
			}
		}
	}
	return nil
}

// TruncIndex allows the retrieval of string identifiers by any of their unique prefixes.
// This is used to retrieve image and container IDs by more convenient shorthand prefixes.
type TruncIndex struct {
	sync.RWMutex
	trie *Trie
	ids  map[string]struct{}
}

// NewTruncIndex creates a new TruncIndex and initializes with a list of IDs
func NewTruncIndex(ids []string) (idx *TruncIndex) {
	idx = &TruncIndex{
		ids:  make(map[string]struct{}),
		trie: NewTrie(),
	}
	for _, id := range ids {
		idx.addID(id)
	}
	return
}

func (idx *TruncIndex) addID(id string) error {
	if strings.Contains(id, " ") {
		return ErrIllegalChar
	}
	if id == "" {
		return ErrEmptyPrefix
	}
	if _, exists := idx.ids[id]; exists {
		return fmt.Errorf("id already exists: '%s'", id)
	}
	idx.ids[id] = struct{}{}
	if inserted := idx.trie.Insert(Prefix(id), struct{}{}); !inserted {
		return fmt.Errorf("failed to insert id: %s", id)
	}
	return nil
}

// Add adds a new ID to the TruncIndex
func (idx *TruncIndex) Add(id string) error {
	idx.Lock()
	defer idx.Unlock()
	if err := idx.addID(id); err != nil {
		return err
	}
	return nil
}

// Get retrieves an ID from the TruncIndex. If there are multiple IDs
// with the given prefix, an error is thrown.
func (idx *TruncIndex) Get(s string) (string, error) {
	if s == "" {
		return "", ErrEmptyPrefix
	}
	var (
		id string
	)
	subTreeVisitFunc := func(prefix Prefix, item Item) error {
		if id != "" {
			// we haven't found the ID if there are two or more IDs
			id = ""
			return ErrAmbiguousPrefix
		}
		id = string(prefix)
		return nil
	}

	idx.RLock()
	defer idx.RUnlock()
	if err := idx.trie.VisitSubtree(Prefix(s), subTreeVisitFunc); err != nil {
		return "", err
	}
	if id != "" {
		return id, nil
	}
	return "", fmt.Errorf("no such id: %s", s)
}

// Iterate iterates over all stored IDs, and passes each of them to the given handler.
func (idx *TruncIndex) Iterate(handler func(id string)) {
	idx.trie.Visit(func(prefix Prefix, item Item) error {
		handler(string(prefix))
		return nil
	})
}

// ---- graph ----

type Image struct {
	ID     string
	Parent string
	Size   int64
}

// Driver is the graphdriver.Driver interface, trimmed to what Graph.Get uses.
type Driver interface {
	DiffSize(id, parent string) (size int64, err error)
}

// Graph is a store for versioned filesystem images and the relationship between them.
type Graph struct {
	root    string
	idIndex *TruncIndex
	driver  Driver
	images  map[string]Image // on-disk image json, keyed by ID
}

func (graph *Graph) loadImage(id string) (*Image, error) {
	img, ok := graph.images[id]
	if !ok {
		return nil, fmt.Errorf("image %s not found on disk", id)
	}
	return &img, nil
}

// Exists returns true if an image is registered at the given id.
// If the image doesn't exist or if an error is encountered, false is returned.
func (graph *Graph) Exists(id string) bool {
	if _, err := graph.Get(id); err != nil {
		return false
	}
	return true
}

// Get returns the image with the given id, or an error if the image doesn't exist.
func (graph *Graph) Get(name string) (*Image, error) {
	id, err := graph.idIndex.Get(name)
	if err != nil {
		return nil, fmt.Errorf("could not find image: %v", err)
	}
	img, err := graph.loadImage(id)
	if err != nil {
		return nil, err
	}
	if img.ID != id {
		return nil, fmt.Errorf("Image stored at '%s' has wrong id '%s'", id, img.ID)
	}

	if img.Size < 0 {
		size, err := graph.driver.DiffSize(img.ID, img.Parent)
		if err != nil {
			return nil, fmt.Errorf("unable to calculate size of image id %q: %s", img.ID, err)
		}
		img.Size = size
	}
	return img, nil
}

// Register imports a pre-existing image into the graph.
func (graph *Graph) Register(img *Image) (err error) {
	// Skip register if image is already registered
	if graph.Exists(img.ID) {
		return nil
	}
	// (writing the layer and the image json to disk is trimmed)
	graph.idIndex.Add(img.ID)
	return nil
}

// walkAll iterates over each image in the graph, and passes it to a handler.
// The walking order is undetermined.
func (graph *Graph) walkAll(handler func(*Image)) {
	graph.idIndex.Iterate(func(id string) {
		if img, err := graph.Get(id); err != nil {
			return
		} else if handler != nil {
			handler(img)
		}
	})
}

// Map returns a list of all images in the graph, addressable by ID.
func (graph *Graph) Map() map[string]*Image {
	images := make(map[string]*Image)
	graph.walkAll(func(image *Image) {
		images[image.ID] = image
	})
	return images
}

// aufsDriver computes a layer's size by walking its diff directory, which
// takes a while; the first call lets the concurrent pull start.
type aufsDriver struct {
	started   atomic.Bool
	pullStart chan struct{}
}

func (d *aufsDriver) DiffSize(id, parent string) (int64, error) {
	if d.started.CompareAndSwap(false, true) {
		close(d.pullStart)
		time.Sleep(20 * time.Millisecond)
	}
	return 1024, nil
}

func main() {
	drv := &aufsDriver{pullStart: make(chan struct{})}
	graph := &Graph{
		root:    "/var/lib/docker/graph",
		idIndex: NewTruncIndex([]string{"4a1b", "9c2d"}),
		driver:  drv,
		images: map[string]Image{
			"4a1b": {ID: "4a1b", Size: -1},
			"9c2d": {ID: "9c2d", Parent: "4a1b", Size: -1},
			"e7f3": {ID: "e7f3", Parent: "9c2d", Size: 512},
		},
	}

	// "docker pull" registers a new image while "docker images" lists them.
	pulled := make(chan error, 1)
	go func() {
		<-drv.pullStart
		pulled <- graph.Register(&Image{ID: "e7f3", Parent: "9c2d", Size: 512})
	}()

	images := graph.Map()
	fmt.Println("images:", len(images))
	if err := <-pulled; err != nil {
		fmt.Println("pull:", err)
	}
}
