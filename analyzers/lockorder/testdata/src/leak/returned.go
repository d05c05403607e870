package leak

import (
	"errors"
	"sync"
)

// A function that returns an object read-locked for its caller (badger's
// valueLog.getFileRLocked: "You must call RUnlock on the file") hands the
// lock over with the value; under a deferred unlock of its own lock the
// result goes through SSA's result slot, which is read back to see it.

type logFile struct{ lock sync.RWMutex }

type valueLog struct {
	filesLock sync.RWMutex
	files     map[uint32]*logFile
	maxFid    uint32
}

// fileRLocked returns the file read-locked, or an error. Silent.
func (v *valueLog) fileRLocked(fid uint32) (*logFile, error) {
	v.filesLock.RLock()
	defer v.filesLock.RUnlock()
	lf, ok := v.files[fid]
	if !ok {
		return nil, errors.New("file gone")
	}
	if fid == v.maxFid {
		return nil, errors.New("file being written")
	}
	lf.lock.RLock()
	return lf, nil
}

// fileCheck read-locks the file and returns only an error.
func (v *valueLog) fileCheck(fid uint32) error { // want `the function returns with different locks held on different paths: logFile.lock \(taken at returned.go:\d+\) held on some return paths only \[inconsistent-return\]`
	v.filesLock.RLock()
	defer v.filesLock.RUnlock()
	lf, ok := v.files[fid]
	if !ok {
		return errors.New("file gone")
	}
	lf.lock.RLock()
	return nil
}
