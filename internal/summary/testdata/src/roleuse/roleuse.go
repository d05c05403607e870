package roleuse

import "rolesrc"

// Use keeps the import.
var Use = rolesrc.Poller{}

// Owned names the role rolesrc declares.
//
//confined:control poll
var Owned int // want Owned:"decl\\(control poll\\)"
