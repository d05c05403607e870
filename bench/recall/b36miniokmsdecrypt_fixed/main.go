// Project: minio/minio (internal/kms/kes.go: kesClient.DecryptAll / kesClient.Decrypt, KES client certificate reload)
// Issue: minio/minio#16136 "kms: fix possible deadlock due to nested RLock calls."
// Fixed twin: as in the merged fix, DecryptAll no longer goes through the locking Decrypt;
// it calls the KES client directly under the single read lock it already holds (line 53), so the
// certificate reload's Lock (line 75) only waits for DecryptAll to finish. Decrypt (line 41) still
// read-locks for its own callers.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Context is the KMS encryption context.
type Context map[string]string

// kesAPI stands in for *kes.Client.
type kesAPI struct {
	endpoint string
	cert     string
}

// Decrypt is a network round trip to the KES server.
func (k *kesAPI) Decrypt(_ context.Context, name string, ciphertext, _ []byte) ([]byte, error) {
	time.Sleep(100 * time.Millisecond)
	return append([]byte(name+":"), ciphertext...), nil
}

type kesClient struct {
	lock          sync.RWMutex
	defaultKeyID  string
	client        *kesAPI
	bulkAvailable bool
}

// Decrypt decrypts a single ciphertext.
func (c *kesClient) Decrypt(keyID string, ciphertext []byte, ctx Context) ([]byte, error) {
	c.lock.RLock()
	defer c.lock.RUnlock()

	ctxBytes := []byte(fmt.Sprint(ctx))
	return c.client.Decrypt(context.Background(), keyID, ciphertext, ctxBytes)
}

// DecryptAll decrypts all ciphertexts with the key keyID.
func (c *kesClient) DecryptAll(ctx context.Context, keyID string, ciphertexts [][]byte, contexts []Context) ([][]byte, error) {
	if len(ciphertexts) != len(contexts) {
		return nil, errors.New("kms: invalid number of contexts")
	}
	c.lock.RLock()
	defer c.lock.RUnlock()

	if c.bulkAvailable {
		return nil, errors.New("bulk decryption not modelled")
	}
	plaintexts := make([][]byte, 0, len(ciphertexts))
	for i := range ciphertexts {
		ctxBytes := []byte(fmt.Sprint(contexts[i]))
		plaintext, err := c.client.Decrypt(ctx, keyID, ciphertexts[i], ctxBytes)
		if err != nil {
			return nil, err
		}
		plaintexts = append(plaintexts, plaintext)
	}
	return plaintexts, nil
}

// watchCertificates swaps in a new client whenever the client certificate is reloaded.
func (c *kesClient) watchCertificates(reloadCertEvents <-chan string, done chan<- struct{}) {
	for certificate := range reloadCertEvents {
		client := &kesAPI{endpoint: c.client.endpoint, cert: certificate}
		c.lock.Lock()
		c.client = client
		c.lock.Unlock()
	}
	close(done)
}

func main() {
	c := &kesClient{defaultKeyID: "minio-default-key", client: &kesAPI{endpoint: "https://kes:7373", cert: "v1"}}

	reload := make(chan string)
	watcherDone := make(chan struct{})
	go c.watchCertificates(reload, watcherDone)

	result := make(chan error)
	go func() {
		_, err := c.DecryptAll(context.Background(), c.defaultKeyID,
			[][]byte{[]byte("sealed-key-1"), []byte("sealed-key-2")},
			[]Context{{"bucket": "a"}, {"bucket": "b"}})
		result <- err
	}()

	// The certificate rotates while the first KES round trip is in flight.
	time.Sleep(50 * time.Millisecond)
	reload <- "v2"

	if err := <-result; err != nil {
		fmt.Println("DecryptAll:", err)
	}
	close(reload)
	<-watcherDone
	fmt.Println("decrypted all keys")
}
