// Project: fyne-io/fyne (widget/list.go List.SetItemHeight, listRenderer.Refresh, listLayout.updateList and setupListItem), v2.3.0, December 2022.
// Bug: listLayout.updateList holds the layout's renderLock for the whole update and, while still holding it, calls setupListItem for new rows, which runs the user's stored UpdateItem callback. The new variable-height API invites the callback to call List.SetItemHeight with the measured row height; when the height changes SetItemHeight refreshes the list, and listRenderer.Refresh calls updateList again, which locks renderLock a second time on the same goroutine, so the first w.SetContent(list) hangs (issue #3473, fixed by PR #3474 "Don't deadlock on List row size set in Update callback", which releases renderLock before running the item callbacks, "user code should not be locked").
package b117fynelistitemheight

import (
	"strings"
	"sync"
	"testing"
)

type Size struct{ Width, Height float32 }

type CanvasObject interface {
	MinSize() Size
	Resize(Size)
}

type Widget interface {
	CanvasObject
	CreateRenderer() WidgetRenderer
}

type WidgetRenderer interface {
	Layout(Size)
	Refresh()
}

var (
	renderersLock sync.RWMutex
	renderers     = map[Widget]WidgetRenderer{}
)

func Renderer(wid Widget) WidgetRenderer {
	renderersLock.RLock()
	r, ok := renderers[wid]
	renderersLock.RUnlock()
	if !ok {
		r = wid.CreateRenderer()
		renderersLock.Lock()
		renderers[wid] = r
		renderersLock.Unlock()
	}
	return r
}

type BaseWidget struct {
	size         Size
	impl         Widget
	propertyLock sync.RWMutex
}

func (w *BaseWidget) ExtendBaseWidget(wid Widget) { w.impl = wid }

func (w *BaseWidget) Resize(size Size) {
	w.propertyLock.Lock()
	w.size = size
	impl := w.impl
	w.propertyLock.Unlock()
	Renderer(impl).Layout(size)
}

func (w *BaseWidget) Refresh() { Renderer(w.impl).Refresh() }

// Label is a minimal text object; its height grows with its lines.
type Label struct {
	mu   sync.RWMutex
	Text string
	size Size
}

func NewLabel(text string) *Label { return &Label{Text: text} }

func (l *Label) SetText(text string) { l.mu.Lock(); l.Text = text; l.mu.Unlock() }
func (l *Label) Resize(s Size)       { l.mu.Lock(); l.size = s; l.mu.Unlock() }

func (l *Label) MinSize() Size {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return Size{Width: 80, Height: float32(strings.Count(l.Text, "\n")+1) * 20}
}

type ListItemID = int

type List struct {
	BaseWidget
	Length      func() int
	CreateItem  func() CanvasObject
	UpdateItem  func(id ListItemID, item CanvasObject)
	itemMin     Size
	itemHeights map[ListItemID]float32
}

func NewList(length func() int, createItem func() CanvasObject, updateItem func(ListItemID, CanvasObject)) *List {
	l := &List{Length: length, CreateItem: createItem, UpdateItem: updateItem}
	l.ExtendBaseWidget(l)
	return l
}

func (l *List) MinSize() Size { return Size{Width: 80, Height: 40} }

// SetItemHeight supports changing the height of the specified list item.
func (l *List) SetItemHeight(id ListItemID, height float32) {
	l.propertyLock.Lock()
	if l.itemHeights == nil {
		l.itemHeights = make(map[ListItemID]float32)
	}
	refresh := l.itemHeights[id] != height
	l.itemHeights[id] = height
	l.propertyLock.Unlock()

	if refresh {
		l.Refresh()
	}
}

func (l *List) CreateRenderer() WidgetRenderer {
	if f := l.CreateItem; f != nil {
		l.itemMin = f().MinSize()
	}
	layout := &listLayout{list: l, visible: make(map[ListItemID]*listItem)}
	return &listRenderer{list: l, layout: layout}
}

type listRenderer struct {
	list   *List
	layout *listLayout
}

func (r *listRenderer) Layout(Size) { r.layout.updateList(true) }

func (r *listRenderer) Refresh() {
	if f := r.list.CreateItem; f != nil {
		r.list.itemMin = f().MinSize()
	}
	r.layout.updateList(false)
}

type listItem struct {
	child CanvasObject
	size  Size
}

type listLayout struct {
	list       *List
	children   []*listItem
	itemPool   []*listItem
	visible    map[ListItemID]*listItem
	renderLock sync.Mutex
}

func (l *listLayout) getItem() *listItem {
	if n := len(l.itemPool); n > 0 {
		item := l.itemPool[n-1]
		l.itemPool = l.itemPool[:n-1]
		return item
	}
	return &listItem{child: l.list.CreateItem()}
}

func (l *listLayout) setupListItem(li *listItem, id ListItemID) {
	if f := l.list.UpdateItem; f != nil {
		f(id, li.child)
	}
}

func (l *listLayout) rowHeight(id ListItemID) float32 {
	l.list.propertyLock.RLock()
	defer l.list.propertyLock.RUnlock()
	if h, ok := l.list.itemHeights[id]; ok {
		return h
	}
	return l.list.itemMin.Height
}

func (l *listLayout) updateList(newOnly bool) {
	l.renderLock.Lock()
	defer l.renderLock.Unlock()
	length := 0
	if f := l.list.Length; f != nil {
		length = f()
	}

	wasVisible := l.visible
	l.visible = make(map[ListItemID]*listItem, len(wasVisible))
	var cells []*listItem
	for row := 0; row < length; row++ {
		c, ok := wasVisible[row]
		if !ok {
			c = l.getItem()
			c.size = Size{Width: 80, Height: l.rowHeight(row)}
			l.setupListItem(c, row)
		} else if !newOnly {
			l.setupListItem(c, row)
		}
		l.visible[row] = c
		cells = append(cells, c)
	}
	for id, old := range wasVisible {
		if _, ok := l.visible[id]; !ok {
			l.itemPool = append(l.itemPool, old)
		}
	}
	l.children = cells
}

func TestB117fynelistitemheight(t *testing.T) {
	data := []string{"a line of data", "a line of data\na line of data", "a line of data\na line of data\na line of data"}

	var lst *List
	lst = NewList(
		func() int { return len(data) },
		func() CanvasObject { return NewLabel("") },
		func(id ListItemID, co CanvasObject) {
			co.(*Label).SetText(data[id])
			lst.SetItemHeight(id, co.(*Label).MinSize().Height)
		},
	)

	lst.Resize(Size{Width: 200, Height: 300}) // w.SetContent(lst): code execution stops here
}
