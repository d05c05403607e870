package roleuse

import "rolesrc"

// Use keeps the import.
var Use = rolesrc.Poller{}

// Owned names the role rolesrc declares.
var Owned int //confined:control poll
