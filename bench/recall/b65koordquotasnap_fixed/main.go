// Shape of koordinator-sh/koordinator#3104 ("scheduler: fix potential
// deadlock caused by double RLock in GetQuotaSnapshot"): the elastic quota
// GroupQuotaManager's GetQuotaSnapshot read-locks hierarchyUpdateLock and,
// for every quota in the tree, calls the exported GetQuotaInfoByName, which
// read-locks it again. An ElasticQuota update from the informer
// (UpdateQuota, write lock) queued in between blocks the nested RLock.
package main

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

type ResourceList map[string]int64

type QuotaInfo struct {
	lock       sync.Mutex
	Name       string
	ParentName string
	Min, Max   ResourceList
	Used       ResourceList
}

func (qi *QuotaInfo) DeepCopy() *QuotaInfo {
	qi.lock.Lock()
	defer qi.lock.Unlock()
	cp := &QuotaInfo{Name: qi.Name, ParentName: qi.ParentName, Min: ResourceList{}, Max: ResourceList{}, Used: ResourceList{}}
	for k, v := range qi.Min {
		cp.Min[k] = v
	}
	for k, v := range qi.Max {
		cp.Max[k] = v
	}
	for k, v := range qi.Used {
		cp.Used[k] = v
	}
	return cp
}

type ElasticQuota struct {
	Name, Parent string
	Min, Max     ResourceList
}

type GroupQuotaManager struct {
	// hierarchyUpdateLock guards the quota tree
	hierarchyUpdateLock sync.RWMutex
	quotaInfoMap        map[string]*QuotaInfo
	quotaTopoNodeMap    map[string][]string // parent -> children
}

func NewGroupQuotaManager() *GroupQuotaManager {
	return &GroupQuotaManager{quotaInfoMap: map[string]*QuotaInfo{}, quotaTopoNodeMap: map[string][]string{}}
}

func (gqm *GroupQuotaManager) UpdateQuota(quota *ElasticQuota, isDelete bool) error {
	gqm.hierarchyUpdateLock.Lock()
	defer gqm.hierarchyUpdateLock.Unlock()
	if isDelete {
		delete(gqm.quotaInfoMap, quota.Name)
		return nil
	}
	if _, ok := gqm.quotaInfoMap[quota.Name]; !ok {
		gqm.quotaTopoNodeMap[quota.Parent] = append(gqm.quotaTopoNodeMap[quota.Parent], quota.Name)
	}
	gqm.quotaInfoMap[quota.Name] = &QuotaInfo{Name: quota.Name, ParentName: quota.Parent, Min: quota.Min, Max: quota.Max, Used: ResourceList{}}
	return nil
}

func (gqm *GroupQuotaManager) GetQuotaInfoByName(name string) *QuotaInfo {
	gqm.hierarchyUpdateLock.RLock()
	defer gqm.hierarchyUpdateLock.RUnlock()
	return gqm.getQuotaInfoByNameNoLock(name)
}

func (gqm *GroupQuotaManager) getQuotaInfoByNameNoLock(name string) *QuotaInfo {
	return gqm.quotaInfoMap[name]
}

// GetQuotaSnapshot walks the quota tree from the root and copies every quota.
func (gqm *GroupQuotaManager) GetQuotaSnapshot() map[string]*QuotaInfo {
	gqm.hierarchyUpdateLock.RLock()
	defer gqm.hierarchyUpdateLock.RUnlock()
	snapshot := map[string]*QuotaInfo{}
	queue := []string{"koordinator-root-quota"}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		children := append([]string(nil), gqm.quotaTopoNodeMap[name]...)
		sort.Strings(children)
		queue = append(queue, children...)
		time.Sleep(50 * time.Millisecond) // runtime refresh of the subtree
		// Fix (#3104): the read lock is already held; use the NoLock accessor.
		if info := gqm.getQuotaInfoByNameNoLock(name); info != nil {
			snapshot[name] = info.DeepCopy()
		}
	}
	return snapshot
}

// Plugin is the ElasticQuota scheduler plugin.
type Plugin struct {
	groupQuotaManager *GroupQuotaManager
}

func (p *Plugin) OnQuotaUpdate(oldObj, newObj *ElasticQuota) {
	_ = p.groupQuotaManager.UpdateQuota(newObj, false)
}

// quotaSnapshot serves the plugin's debug endpoint.
func (p *Plugin) quotaSnapshot() []string {
	var out []string
	for name, qi := range p.groupQuotaManager.GetQuotaSnapshot() {
		out = append(out, fmt.Sprintf("%s(min cpu=%d)", name, qi.Min["cpu"]))
	}
	sort.Strings(out)
	return out
}

func main() {
	p := &Plugin{groupQuotaManager: NewGroupQuotaManager()}
	gqm := p.groupQuotaManager
	_ = gqm.UpdateQuota(&ElasticQuota{Name: "koordinator-root-quota", Min: ResourceList{"cpu": 512}, Max: ResourceList{"cpu": 512}}, false)
	_ = gqm.UpdateQuota(&ElasticQuota{Name: "team-a", Parent: "koordinator-root-quota", Min: ResourceList{"cpu": 64}, Max: ResourceList{"cpu": 128}}, false)

	done := make(chan struct{})
	go func() { // informer: team-a's ElasticQuota max was raised
		time.Sleep(20 * time.Millisecond)
		p.OnQuotaUpdate(nil, &ElasticQuota{Name: "team-a", Parent: "koordinator-root-quota", Min: ResourceList{"cpu": 64}, Max: ResourceList{"cpu": 256}})
		close(done)
	}()

	fmt.Println(p.quotaSnapshot())
	<-done
}
