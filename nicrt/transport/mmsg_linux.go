package transport

import (
	"encoding/binary"
	"net/netip"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmsgBatcher calls recvmmsg and sendmmsg itself, through the socket's
// RawConn (so the runtime poller still parks readers, and deadlines and
// Close work as for any net.Conn). Unlike golang.org/x/net, it keeps its
// message headers and address buffers from call to call and decodes source
// addresses straight into netip values: no allocation, no per-call packing
// of a pooled scratch area.
type mmsgBatcher struct {
	rc syscall.RawConn
	v6 bool
	rx mmsgVec
	tx mmsgVec

	recvFn, sendFn func(fd uintptr) bool // bound once: no closure per call
}

// mmsgVec is one direction's kernel-facing arrays, reused by every call.
type mmsgVec struct {
	hdrs  []unix.Mmsghdr
	iovs  []unix.Iovec
	names []unix.RawSockaddrInet6 // large enough for either family
	vlen  int                     // messages in this call
	n     int                     // messages done by the last syscall
	errno syscall.Errno
}

const msgTrunc = unix.MSG_TRUNC

func newMmsgBatcher(rc syscall.RawConn, v6 bool) batcher {
	m := &mmsgBatcher{rc: rc, v6: v6}
	m.recvFn = m.recvmmsg
	m.sendFn = m.sendmmsg
	return m
}

func (v *mmsgVec) grow(n int) {
	if n <= len(v.hdrs) {
		return
	}
	v.hdrs = make([]unix.Mmsghdr, n)
	v.iovs = make([]unix.Iovec, n)
	v.names = make([]unix.RawSockaddrInet6, n)
	for i := range v.hdrs {
		h := &v.hdrs[i].Hdr
		h.Iov = &v.iovs[i]
		h.Iovlen = 1
		h.Name = (*byte)(unsafe.Pointer(&v.names[i]))
	}
}

func setIov(iov *unix.Iovec, b []byte) {
	iov.Base = nil
	if len(b) > 0 {
		iov.Base = &b[0]
	}
	iov.SetLen(len(b))
}

func (m *mmsgBatcher) read(ps []Packet) (n, trunc int, err error) {
	v := &m.rx
	v.grow(len(ps))
	for i := range ps {
		setIov(&v.iovs[i], ps[i].Buf)
		v.hdrs[i].Hdr.Namelen = unix.SizeofSockaddrInet6
		v.hdrs[i].Hdr.Flags = 0
	}
	v.vlen = len(ps)
	err = m.rc.Read(m.recvFn)
	for i := range ps {
		v.iovs[i].Base = nil // keep no reference to the caller's buffers
	}
	if err != nil {
		return 0, 0, err
	}
	if v.errno != 0 {
		return 0, 0, os.NewSyscallError("recvmmsg", v.errno)
	}
	for i := 0; i < v.n; i++ {
		h := &v.hdrs[i]
		ps[i].N = int(h.Len)
		if h.Hdr.Flags&unix.MSG_TRUNC != 0 {
			trunc++
		}
		ps[i].Addr = decodeSockaddr(&v.names[i], h.Hdr.Namelen)
	}
	return v.n, trunc, nil
}

// recvmmsg runs inside RawConn.Read; returning false parks the goroutine
// until the socket is readable (or the deadline or Close ends the wait).
func (m *mmsgBatcher) recvmmsg(fd uintptr) bool {
	v := &m.rx
	r, _, e := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&v.hdrs[0])), uintptr(v.vlen), unix.MSG_DONTWAIT, 0, 0)
	for e == unix.EINTR { // retry now: the poller would wait for a new edge
		r, _, e = unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&v.hdrs[0])), uintptr(v.vlen), unix.MSG_DONTWAIT, 0, 0)
	}
	if e == unix.EAGAIN {
		return false
	}
	v.n, v.errno = int(r), e
	return true
}

func (m *mmsgBatcher) write(ps []Packet) (sent, calls int, err error) {
	v := &m.tx
	v.grow(len(ps))
	for i := range ps {
		setIov(&v.iovs[i], ps[i].Buf[:ps[i].N])
		v.hdrs[i].Hdr.Namelen = encodeSockaddr(&v.names[i], ps[i].Addr, m.v6)
	}
	for sent < len(ps) {
		v.n, v.errno = 0, 0
		v.vlen = len(ps) - sent
		hdrs := v.hdrs
		v.hdrs = v.hdrs[sent:] // sendmmsg takes the rest from here
		err = m.rc.Write(m.sendFn)
		v.hdrs = hdrs
		calls++
		if err == nil && v.errno != 0 {
			err = os.NewSyscallError("sendmmsg", v.errno)
		}
		sent += v.n
		if err != nil || v.n == 0 {
			break
		}
	}
	for i := range ps {
		v.iovs[i].Base = nil
	}
	return sent, calls, err
}

func (m *mmsgBatcher) sendmmsg(fd uintptr) bool {
	v := &m.tx
	r, _, e := unix.Syscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&v.hdrs[0])), uintptr(v.vlen), unix.MSG_DONTWAIT, 0, 0)
	for e == unix.EINTR {
		r, _, e = unix.Syscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&v.hdrs[0])), uintptr(v.vlen), unix.MSG_DONTWAIT, 0, 0)
	}
	if e == unix.EAGAIN {
		return false // socket buffer full: wait until writable
	}
	v.n, v.errno = int(r), e
	return true
}

// decodeSockaddr reads a kernel socket address; ports are big-endian.
func decodeSockaddr(sa *unix.RawSockaddrInet6, n uint32) Addr {
	raw := (*[unix.SizeofSockaddrInet6]byte)(unsafe.Pointer(sa))
	port := binary.BigEndian.Uint16(raw[2:4])
	switch sa.Family {
	case unix.AF_INET:
		if n < unix.SizeofSockaddrInet4 {
			return Addr{}
		}
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(raw[4:8])), port)
	case unix.AF_INET6:
		if n < unix.SizeofSockaddrInet6 {
			return Addr{}
		}
		a := netip.AddrFrom16(sa.Addr).Unmap()
		if sa.Scope_id != 0 && a.Is6() {
			a = a.WithZone(zoneName(sa.Scope_id))
		}
		return netip.AddrPortFrom(a, port)
	}
	return Addr{}
}

// zoneName names an interface by index for a link-local source. The index
// itself is a valid zone for net and netip, and needs no lookup.
func zoneName(index uint32) string { return strconv.FormatUint(uint64(index), 10) }

// encodeSockaddr writes dst in the socket's family and returns its length.
// The caller has checked the family (checkDest).
func encodeSockaddr(sa *unix.RawSockaddrInet6, dst Addr, v6 bool) uint32 {
	raw := (*[unix.SizeofSockaddrInet6]byte)(unsafe.Pointer(sa))
	*sa = unix.RawSockaddrInet6{}
	binary.BigEndian.PutUint16(raw[2:4], dst.Port())
	a := dst.Addr()
	if !v6 {
		sa.Family = unix.AF_INET
		a4 := a.Unmap().As4()
		copy(raw[4:8], a4[:])
		return unix.SizeofSockaddrInet4
	}
	sa.Family = unix.AF_INET6
	sa.Addr = a.As16()
	if z := a.Zone(); z != "" {
		if id, err := strconv.ParseUint(z, 10, 32); err == nil {
			sa.Scope_id = uint32(id)
		} else if ifi, err := netInterfaceIndex(z); err == nil {
			sa.Scope_id = uint32(ifi)
		}
	}
	return unix.SizeofSockaddrInet6
}
