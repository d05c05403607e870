// Package broker is a client whose callback registration is not a known
// asynchronous API: confinelint assumes it calls the callback synchronously.
package broker

// Client is a broker connection.
type Client struct{ revoked func([]int32) }

// OnRevoked registers fn for partition revocations.
func (c *Client) OnRevoked(fn func([]int32)) { c.revoked = fn }

// CommitOffsets publishes offsets.
func (c *Client) CommitOffsets(offsets map[int32]int64) {}
