// Project: hashicorp/terraform, AzureRM provider (builtin/providers/azurerm/resource_arm_subnet.go with helper/mutexkv), Terraform 0.9.x, 2017; the provider then moved to hashicorp/terraform-provider-azurerm (issues hashicorp/terraform#15204 and #7986, fixed by terraform-provider-azurerm PR #6, June 2017).
// Bug: resourceArmSubnetCreate serializes Azure network calls through the provider-wide MutexKV, locking the virtual network by name and then the attached network security group and route table by name. The keys were the bare resource names, so a subnet whose network security group is named like its virtual network (both "etcd" here) locks the same per-key mutex twice on one goroutine and terraform apply hangs forever. The fix prefixes every lock key with the resource type (azureRMLockByName(name, resourceType)).
package main

import (
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
)

// MutexKV is a simple key/value store for arbitrary mutexes. It can be used to
// serialize changes across arbitrary collaborators that share knowledge of the
// keys they must serialize on.
type MutexKV struct {
	lock  sync.Mutex
	store map[string]*sync.Mutex
}

// Locks the mutex for the given key. Caller is responsible for calling Unlock
// for the same key.
func (m *MutexKV) Lock(key string) {
	log.Printf("[DEBUG] Locking %q", key)
	m.get(key).Lock()
	log.Printf("[DEBUG] Locked %q", key)
}

// Unlock the mutex for the given key. Caller must have called Lock for the same key first.
func (m *MutexKV) Unlock(key string) {
	log.Printf("[DEBUG] Unlocking %q", key)
	m.get(key).Unlock()
	log.Printf("[DEBUG] Unlocked %q", key)
}

// Returns a mutex for the given key, no guarantee of its lock status.
func (m *MutexKV) get(key string) *sync.Mutex {
	m.lock.Lock()
	defer m.lock.Unlock()
	mutex, ok := m.store[key]
	if !ok {
		mutex = &sync.Mutex{}
		m.store[key] = mutex
	}
	return mutex
}

func NewMutexKV() *MutexKV { return &MutexKV{store: make(map[string]*sync.Mutex)} }

// armMutexKV is the instance of MutexKV for ARM resources.
var armMutexKV = NewMutexKV()

type ResourceData struct {
	id    string
	attrs map[string]interface{}
}

func (d *ResourceData) Get(k string) interface{} { return d.attrs[k] }
func (d *ResourceData) GetOk(k string) (interface{}, bool) {
	v, ok := d.attrs[k]
	return v, ok && v != ""
}
func (d *ResourceData) SetId(id string) { d.id = id }

type SecurityGroup struct{ ID *string }
type RouteTable struct{ ID *string }
type SubnetPropertiesFormat struct {
	AddressPrefix        *string
	NetworkSecurityGroup *SecurityGroup
	RouteTable           *RouteTable
}
type Subnet struct {
	Name       *string
	Properties *SubnetPropertiesFormat
}

type SubnetsClient struct {
	mu      sync.Mutex
	subnets map[string]Subnet
}

func (c *SubnetsClient) CreateOrUpdate(resGroup, vnetName, name string, params Subnet) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := fmt.Sprintf("/subscriptions/0000/resourceGroups/%s/providers/Microsoft.Network/virtualNetworks/%s/subnets/%s", resGroup, vnetName, name)
	c.subnets[id] = params
	return id, nil
}

type ArmClient struct{ subnetClient *SubnetsClient }

// parseAzureResourceID splits an ARM ID into its key/value path segments.
func parseAzureResourceID(id string) (map[string]string, error) {
	components := strings.Split(strings.Trim(id, "/"), "/")
	if len(components)%2 != 0 {
		return nil, fmt.Errorf("The number of path segments is not divisible by 2 in %q", id)
	}
	path := map[string]string{}
	for i := 0; i < len(components); i += 2 {
		path[components[i]] = components[i+1]
	}
	return path, nil
}

func parseNetworkSecurityGroupName(networkSecurityGroupId string) (string, error) {
	id, err := parseAzureResourceID(networkSecurityGroupId)
	if err != nil {
		return "", fmt.Errorf("[ERROR] Unable to Parse Network Security Group ID '%s': %+v", networkSecurityGroupId, err)
	}
	return id["networkSecurityGroups"], nil
}

func parseRouteTableName(routeTableId string) (string, error) {
	id, err := parseAzureResourceID(routeTableId)
	if err != nil {
		return "", fmt.Errorf("[ERROR] Unable to Parse Route Table ID '%s': %+v", routeTableId, err)
	}
	return id["routeTables"], nil
}

func resourceArmSubnetCreate(d *ResourceData, meta interface{}) error {
	client := meta.(*ArmClient)
	subnetClient := client.subnetClient

	name := d.Get("name").(string)
	vnetName := d.Get("virtual_network_name").(string)
	resGroup := d.Get("resource_group_name").(string)
	addressPrefix := d.Get("address_prefix").(string)

	armMutexKV.Lock(vnetName)
	defer armMutexKV.Unlock(vnetName)

	properties := SubnetPropertiesFormat{AddressPrefix: &addressPrefix}

	if v, ok := d.GetOk("network_security_group_id"); ok {
		nsgId := v.(string)
		properties.NetworkSecurityGroup = &SecurityGroup{ID: &nsgId}

		networkSecurityGroupName, err := parseNetworkSecurityGroupName(nsgId)
		if err != nil {
			return err
		}

		armMutexKV.Lock(networkSecurityGroupName)
		defer armMutexKV.Unlock(networkSecurityGroupName)
	}

	if v, ok := d.GetOk("route_table_id"); ok {
		rtId := v.(string)
		properties.RouteTable = &RouteTable{ID: &rtId}

		routeTableName, err := parseRouteTableName(rtId)
		if err != nil {
			return err
		}

		armMutexKV.Lock(routeTableName)
		defer armMutexKV.Unlock(routeTableName)
	}

	subnet := Subnet{Name: &name, Properties: &properties}
	id, err := subnetClient.CreateOrUpdate(resGroup, vnetName, name, subnet)
	if err != nil {
		return err
	}
	d.SetId(id)
	return nil
}

func main() {
	log.SetFlags(0)
	log.SetOutput(os.Stdout)
	meta := &ArmClient{subnetClient: &SubnetsClient{subnets: map[string]Subnet{}}}
	const prefix = "/subscriptions/0000/resourceGroups/etcd-rg/providers/Microsoft.Network"

	// module.etcd_junk.azurerm_subnet.etcd: its VNet and NSG are named after the module.
	subnets := []*ResourceData{
		{attrs: map[string]interface{}{
			"name": "etcd", "virtual_network_name": "etcd", "resource_group_name": "etcd-rg",
			"address_prefix":            "10.0.1.0/24",
			"network_security_group_id": prefix + "/networkSecurityGroups/etcd",
			"route_table_id":            prefix + "/routeTables/etcd-routes",
		}},
	}

	var wg sync.WaitGroup
	for _, d := range subnets {
		wg.Add(1)
		go func(d *ResourceData) {
			defer wg.Done()
			if err := resourceArmSubnetCreate(d, meta); err != nil {
				log.Printf("[ERROR] %s", err)
				return
			}
			log.Printf("[INFO] azurerm_subnet.%s: Creation complete (ID: %s)", d.Get("name"), d.id)
		}(d)
	}
	wg.Wait()
	fmt.Println("Apply complete! Resources: 1 added, 0 changed, 0 destroyed.")
}
