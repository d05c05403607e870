// Package checklocks_prepare: a declared acquire made only on success
// (the callee returns an error before taking the lock, and forces that
// return) is held by the caller where the call succeeded, even when the
// callee's result goes through a deferred unlock's result slot. Passing
// it on to one's own caller on success needs a declaration too.
package checklocks_prepare

import "checklocks_prepare/vfs"

func remove(v *vfs.VFS, d *vfs.Dentry) error {
	if err := v.PrepareDelete(d); err != nil {
		return err // nothing held: the preparation failed
	}
	v.CommitDelete(d)
	return nil
}

func removeLeaky(v *vfs.VFS, d *vfs.Dentry) error {
	if err := v.PrepareDelete(d); err != nil {
		return err
	}
	return nil // want `Dentry.mu taken at prepare.go:\d+ is still held when the function returns on success, but the function does not declare it: .*declare //confined:acquires d.mu .*\[acquires\]`
}

// prepared passes the lock on, as declared.
// +checklocksacquire:d.mu
func prepared(v *vfs.VFS, d *vfs.Dentry) error {
	if err := v.PrepareDelete(d); err != nil {
		return err // +checklocksforce: nothing taken on failure
	}
	return nil
}
