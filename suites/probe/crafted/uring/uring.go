//go:build linux

// Package uring is io_uring spoken directly (linux/io_uring.h), as much of it as the probe's
// crafted requests need: one ring, one request at a time. The bytes are the point: a socket made
// and connected through it is a system call a seccomp filter on socket(2) never sees.
package uring

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Opcodes and mmap offsets of linux/io_uring.h.
const (
	OpConnect         = 16
	OpSocket          = 45 // Linux 5.19
	ioringOffSQRing   = 0
	ioringOffCQRing   = 0x8000000
	ioringOffSQEs     = 0x10000000
	ioringEnterGetEvt = 1
)

type sqOffsets struct {
	Head, Tail, RingMask, RingEntries, Flags, Dropped, Array, Resv1 uint32
	UserAddr                                                        uint64
}

type cqOffsets struct {
	Head, Tail, RingMask, RingEntries, Overflow, CQEs, Flags, Resv1 uint32
	UserAddr                                                        uint64
}

type uringParams struct {
	SQEntries, CQEntries, Flags, SQThreadCPU, SQThreadIdle, Features, WQFd uint32
	Resv                                                                   [3]uint32
	SQOff                                                                  sqOffsets
	CQOff                                                                  cqOffsets
}

// Ring is one io_uring instance with its rings mapped.
type Ring struct {
	fd       int
	sq, cq   []byte
	sqes     []byte
	p        uringParams
	released []func()
}

// New sets up a ring of four entries.
func New() (*Ring, error) {
	u := &Ring{}
	fd, _, en := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&u.p)), 0)
	if en != 0 {
		return nil, fmt.Errorf("io_uring_setup: %w", en)
	}
	u.fd = int(fd)
	mm := func(off int64, size int) ([]byte, error) {
		b, err := unix.Mmap(u.fd, off, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err == nil {
			u.released = append(u.released, func() { unix.Munmap(b) })
		}
		return b, err
	}
	var err error
	if u.sq, err = mm(ioringOffSQRing, int(u.p.SQOff.Array+u.p.SQEntries*4)); err == nil {
		if u.cq, err = mm(ioringOffCQRing, int(u.p.CQOff.CQEs+u.p.CQEntries*16)); err == nil {
			u.sqes, err = mm(ioringOffSQEs, int(u.p.SQEntries*64))
		}
	}
	if err != nil {
		u.Close()
		return nil, fmt.Errorf("io_uring mmap: %w", err)
	}
	return u, nil
}

// Close unmaps the rings and closes the ring's descriptor.
func (u *Ring) Close() {
	for _, f := range u.released {
		f()
	}
	unix.Close(u.fd)
}

func u32at(b []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&b[off])) }

// Submit runs one request (opcode, fd, addr, len, off) and returns its result: a file
// descriptor or 0 on success, -en on failure.
func (u *Ring) Submit(op byte, fd int32, addr uintptr, length uint32, off uint64) (int32, error) {
	tail := atomic.LoadUint32(u32at(u.sq, u.p.SQOff.Tail))
	idx := tail & atomic.LoadUint32(u32at(u.sq, u.p.SQOff.RingMask))
	sqe := u.sqes[idx*64 : idx*64+64]
	clear(sqe)
	sqe[0] = op
	binary.NativeEndian.PutUint32(sqe[4:], uint32(fd))
	binary.NativeEndian.PutUint64(sqe[8:], off)
	binary.NativeEndian.PutUint64(sqe[16:], uint64(addr))
	binary.NativeEndian.PutUint32(sqe[24:], length)
	binary.NativeEndian.PutUint64(sqe[32:], 0x5c)
	*u32at(u.sq, u.p.SQOff.Array+idx*4) = idx
	atomic.StoreUint32(u32at(u.sq, u.p.SQOff.Tail), tail+1)
	_, _, en := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(u.fd), 1, 1, ioringEnterGetEvt, 0, 0)
	if en != 0 {
		return 0, fmt.Errorf("io_uring_enter: %w", en)
	}
	head := atomic.LoadUint32(u32at(u.cq, u.p.CQOff.Head))
	if head == atomic.LoadUint32(u32at(u.cq, u.p.CQOff.Tail)) {
		return 0, fmt.Errorf("io_uring: no completion")
	}
	cqe := u.cq[u.p.CQOff.CQEs+(head&atomic.LoadUint32(u32at(u.cq, u.p.CQOff.RingMask)))*16:]
	res := int32(binary.NativeEndian.Uint32(cqe[8:]))
	atomic.StoreUint32(u32at(u.cq, u.p.CQOff.Head), head+1)
	return res, nil
}
