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

// mmsgBatcher makes the batch system calls itself, through the socket's
// RawConn (so the runtime poller still parks readers, and deadlines and
// Close work as for any net.Conn). Unlike golang.org/x/net, it keeps its
// message headers and address buffers from call to call and decodes source
// addresses straight into netip values: no allocation and no per-call
// packing of a pooled scratch area.
//
// Three refinements, each measured on the 2-core VM the benchmarks run on
// (bench_test.go):
//
//   - UDP segmentation offload (UDP_SEGMENT): consecutive datagrams of one
//     WriteBatch to the same address and of the same length (the last may
//     be shorter) leave as one message, which the kernel splits only where
//     it must; 8 datagrams cost a quarter as much to send.
//   - UDP receive offload (UDP_GRO): the kernel may hand over such a train
//     (or datagrams it merged) as one message with the segment size beside
//     it; ReadBatch cuts it back into datagrams. The train then crosses the
//     stack once: another factor of two.
//   - A batch of one uses recvfrom/sendto (recvmsg with GRO), which cost
//     less than their mmsg forms, and an empty second slot costs recvmmsg
//     about 0.4µs more. Reads switch to the single call while each finds
//     one datagram after waiting for it, and back when one was queued.
type mmsgBatcher struct {
	rc    syscall.RawConn
	v6    bool
	gso   bool // send trains with UDP_SEGMENT
	gro   bool // the socket has UDP_GRO on
	stats *udpCounters

	rx mmsgVec
	tx mmsgVec

	// rxSingle: the last read found a single datagram, so the next reads
	// one; rxWaited: that single read had to wait for it.
	rxSingle, rxWaited bool

	// With GRO, messages land in groBufs and are cut into datagrams;
	// pend is the cursor over the last receive's messages.
	groBufs [][]byte
	pend    groCursor

	// bound once: no closure per call
	recvFn, sendFn, recvOneFn, sendOneFn, recvMsgFn func(fd uintptr) bool
}

// mmsgVec is one direction's kernel-facing arrays, reused by every call.
type mmsgVec struct {
	hdrs   []unix.Mmsghdr
	iovs   []unix.Iovec
	names  []unix.RawSockaddrInet6 // large enough for either family
	ctrl   [][ctrlLen]byte         // UDP_SEGMENT out, UDP_GRO in
	counts []int                   // tx: datagrams in each message
	packed int                     // tx: iovecs that point at caller buffers
	one    []byte                  // the buffer of a recvfrom or sendto
	vlen   int                     // messages in this call
	n      int                     // messages done (or bytes, for one)
	errno  syscall.Errno
}

type groCursor struct {
	n, i, off int  // messages received, the current one, bytes of it handed out
	seg       int  // the current message's segment size
	addr      Addr // the current message's source
}

const (
	msgTrunc = unix.MSG_TRUNC

	ctrlLen = 32 // room for one cmsg with an int: CmsgSpace(4) is 24 on 64-bit

	// Trains stay within the kernel's limits: UDP_MAX_SEGMENTS was 64
	// before Linux 6.2, and one message carries at most a datagram's worth.
	maxSegments = 64
	maxTrain    = MaxDatagram

	groSlots   = 8     // messages per GRO receive
	groBufSize = 65535 // a merged train is at most this long
)

func newMmsgBatcher(rc syscall.RawConn, v6, offload bool, stats *udpCounters) batcher {
	m := &mmsgBatcher{rc: rc, v6: v6, stats: stats}
	m.recvFn = m.recvmmsg
	m.sendFn = m.sendmmsg
	m.recvOneFn = m.recvfrom
	m.sendOneFn = m.sendto
	m.recvMsgFn = m.recvmsg
	if offload {
		m.gso = true
		var err error
		if cerr := rc.Control(func(fd uintptr) {
			err = unix.SetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_GRO, 1)
		}); cerr == nil && err == nil {
			m.gro = true
		}
	}
	return m
}

func (v *mmsgVec) grow(n int) {
	if n <= len(v.hdrs) {
		return
	}
	v.hdrs = make([]unix.Mmsghdr, n)
	v.iovs = make([]unix.Iovec, n)
	v.names = make([]unix.RawSockaddrInet6, n)
	v.ctrl = make([][ctrlLen]byte, n)
	v.counts = make([]int, n)
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

// ---- receive ----

func (m *mmsgBatcher) read(ps []Packet) (n, trunc int, err error) {
	if m.gro {
		return m.readGRO(ps)
	}
	v := &m.rx
	v.grow(len(ps))
	if len(ps) == 1 || m.rxSingle {
		n, trunc, err = m.readOne(&ps[0])
		m.rxSingle = m.rxWaited // a datagram already waiting: batch again
		return n, trunc, err
	}
	for i := range ps {
		setIov(&v.iovs[i], ps[i].Buf)
		h := &v.hdrs[i].Hdr
		h.Namelen = unix.SizeofSockaddrInet6
		h.Control, h.Controllen, h.Flags = nil, 0, 0
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
	m.rxSingle = v.n == 1
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
		m.rxWaited = true
		return false
	}
	v.n, v.errno = int(r), e
	return true
}

func (m *mmsgBatcher) readOne(p *Packet) (n, trunc int, err error) {
	v := &m.rx
	v.one = p.Buf
	v.hdrs[0].Hdr.Namelen = unix.SizeofSockaddrInet6
	m.rxWaited = false
	err = m.rc.Read(m.recvOneFn)
	v.one = nil
	if err != nil {
		return 0, 0, err
	}
	if v.errno != 0 {
		return 0, 0, os.NewSyscallError("recvfrom", v.errno)
	}
	// recvfrom with MSG_TRUNC returns the datagram's real length.
	p.N = min(v.n, len(p.Buf))
	if v.n > len(p.Buf) {
		trunc = 1
	}
	p.Addr = decodeSockaddr(&v.names[0], v.hdrs[0].Hdr.Namelen)
	return 1, trunc, nil
}

func (m *mmsgBatcher) recvfrom(fd uintptr) bool {
	v := &m.rx
	var base unsafe.Pointer
	if len(v.one) > 0 {
		base = unsafe.Pointer(&v.one[0])
	}
	call := func() (uintptr, syscall.Errno) {
		r, _, e := unix.Syscall6(unix.SYS_RECVFROM, fd, uintptr(base), uintptr(len(v.one)),
			unix.MSG_DONTWAIT|unix.MSG_TRUNC, uintptr(unsafe.Pointer(&v.names[0])), uintptr(unsafe.Pointer(&v.hdrs[0].Hdr.Namelen)))
		return r, e
	}
	r, e := call()
	for e == unix.EINTR {
		r, e = call()
	}
	if e == unix.EAGAIN {
		m.rxWaited = true
		return false
	}
	v.n, v.errno = int(r), e
	return true
}

// readGRO hands out the datagrams of the last receive, receiving first if
// none are left.
func (m *mmsgBatcher) readGRO(ps []Packet) (n, trunc int, err error) {
	if m.pend.i >= m.pend.n {
		if err := m.receiveTrains(ps); err != nil {
			return 0, 0, err
		}
	}
	for n < len(ps) && m.pend.i < m.pend.n {
		c := &m.pend
		total := int(m.rx.hdrs[c.i].Len)
		chunk := min(c.seg, total-c.off)
		p := &ps[n]
		p.N = copy(p.Buf, m.groBufs[c.i][c.off:c.off+chunk])
		p.Addr = c.addr
		if p.N < chunk || m.rx.hdrs[c.i].Hdr.Flags&unix.MSG_TRUNC != 0 && c.off+chunk == total {
			trunc++
		}
		n++
		c.off += chunk
		if c.off >= total {
			c.i++
			c.off = 0
			m.startMessage()
		}
	}
	return n, trunc, nil
}

// receiveTrains receives up to groSlots messages into groBufs.
func (m *mmsgBatcher) receiveTrains(ps []Packet) error {
	v := &m.rx
	v.grow(groSlots)
	if m.groBufs == nil {
		m.groBufs = make([][]byte, groSlots)
		for i := range m.groBufs {
			m.groBufs[i] = make([]byte, groBufSize)
		}
	}
	k := min(len(ps), groSlots)
	if m.rxSingle {
		k = 1
	}
	for i := range k {
		setIov(&v.iovs[i], m.groBufs[i])
		h := &v.hdrs[i].Hdr
		h.Namelen = unix.SizeofSockaddrInet6
		h.Control = &v.ctrl[i][0]
		h.SetControllen(ctrlLen)
		h.Flags = 0
	}
	v.vlen = k
	m.rxWaited = false
	var err error
	if k == 1 {
		err = m.rc.Read(m.recvMsgFn)
	} else {
		err = m.rc.Read(m.recvFn)
	}
	if err != nil {
		return err
	}
	if v.errno != 0 {
		return os.NewSyscallError("recvmmsg", v.errno)
	}
	m.pend = groCursor{n: v.n}
	m.startMessage()
	// One datagram found after waiting for it: read one next time.
	m.rxSingle = v.n == 1 && m.pend.seg >= int(v.hdrs[0].Len) && (k > 1 || m.rxWaited)
	return nil
}

// recvmsg receives one message (with its control data) into rx.hdrs[0].
func (m *mmsgBatcher) recvmsg(fd uintptr) bool {
	v := &m.rx
	r, _, e := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&v.hdrs[0].Hdr)), unix.MSG_DONTWAIT)
	for e == unix.EINTR {
		r, _, e = unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&v.hdrs[0].Hdr)), unix.MSG_DONTWAIT)
	}
	if e == unix.EAGAIN {
		m.rxWaited = true
		return false
	}
	v.n, v.errno = 1, e
	if e == 0 {
		v.hdrs[0].Len = uint32(r)
	}
	return true
}

// startMessage reads the segment size and source of message pend.i.
func (m *mmsgBatcher) startMessage() {
	c := &m.pend
	if c.i >= c.n {
		return
	}
	h := &m.rx.hdrs[c.i]
	c.addr = decodeSockaddr(&m.rx.names[c.i], h.Hdr.Namelen)
	c.seg = groSegment(m.rx.ctrl[c.i][:min(int(h.Hdr.Controllen), ctrlLen)])
	if c.seg <= 0 || c.seg > int(h.Len) {
		c.seg = int(h.Len) // a single datagram
	}
	if h.Len > 1 && c.seg < int(h.Len) {
		m.stats.rxGRO.Add(1)
	}
}

// groSegment finds the UDP_GRO control message and returns its segment
// size, or 0.
func groSegment(ctrl []byte) int {
	hdrLen := unix.CmsgLen(0)
	for len(ctrl) >= hdrLen {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&ctrl[0]))
		l := int(h.Len)
		if l < hdrLen || l > len(ctrl) {
			return 0
		}
		if h.Level == unix.IPPROTO_UDP && h.Type == unix.UDP_GRO && l >= hdrLen+4 {
			return int(*(*int32)(unsafe.Pointer(&ctrl[hdrLen])))
		}
		next := unix.CmsgSpace(l - hdrLen)
		if next > len(ctrl) {
			return 0
		}
		ctrl = ctrl[next:]
	}
	return 0
}

// ---- send ----

func (m *mmsgBatcher) write(ps []Packet) (sent, calls int, err error) {
	v := &m.tx
	v.grow(len(ps))
	if len(ps) == 1 {
		return m.writeOne(&ps[0])
	}
	for sent < len(ps) {
		msgs := m.pack(ps[sent:])
		done, c, err := m.sendMessages(msgs)
		calls += c
		sent += done
		if err == nil {
			if done == 0 {
				break // the kernel took nothing and said nothing
			}
			continue
		}
		if !m.gso || v.counts[messageOf(v.counts[:msgs], done)] == 1 {
			return sent, calls, err
		}
		// The train itself may be what failed (a device without checksum
		// offload, segments over the path MTU): retry without trains, and
		// keep them off unless the plain send fails at once as well.
		m.gso = false
		done, c, err = m.sendMessages(m.pack(ps[sent:]))
		calls += c
		sent += done
		if err != nil {
			m.gso = done == 0
			return sent, calls, err
		}
	}
	return sent, calls, nil
}

// messageOf is the index of the message that holds datagram d.
func messageOf(counts []int, d int) int {
	acc := 0
	for i, c := range counts {
		if acc += c; d < acc {
			return i
		}
	}
	return len(counts) - 1
}

// pack fills tx headers for ps, one per train (or per datagram without
// GSO), and returns how many.
func (m *mmsgBatcher) pack(ps []Packet) int {
	v := &m.tx
	for i := range ps {
		setIov(&v.iovs[i], ps[i].Buf[:ps[i].N])
	}
	v.packed = len(ps)
	msgs := 0
	for i := 0; i < len(ps); {
		k := 1
		if m.gso {
			k = trainLen(ps[i:])
		}
		h := &v.hdrs[msgs].Hdr
		h.Iov = &v.iovs[i]
		h.SetIovlen(k)
		h.Namelen = encodeSockaddr(&v.names[msgs], ps[i].Addr, m.v6)
		h.Control, h.Controllen = nil, 0
		if k > 1 {
			c := v.ctrl[msgs][:]
			ch := (*unix.Cmsghdr)(unsafe.Pointer(&c[0]))
			ch.Level, ch.Type = unix.IPPROTO_UDP, unix.UDP_SEGMENT
			ch.SetLen(unix.CmsgLen(2))
			*(*uint16)(unsafe.Pointer(&c[unix.CmsgLen(0)])) = uint16(ps[i].N)
			h.Control = &c[0]
			h.SetControllen(unix.CmsgSpace(2))
		}
		v.counts[msgs] = k
		msgs++
		i += k
	}
	return msgs
}

// trainLen is how many datagrams from ps[0] can leave as one train: same
// address, same length, the last possibly shorter, within the limits.
func trainLen(ps []Packet) int {
	seg := ps[0].N
	if seg == 0 {
		return 1
	}
	k, total := 1, seg
	for k < len(ps) && k < maxSegments {
		p := &ps[k]
		if p.Addr != ps[0].Addr || p.N == 0 || p.N > seg || total+p.N > maxTrain {
			break
		}
		k++
		total += p.N
		if p.N < seg {
			break // a shorter datagram ends the train
		}
	}
	return k
}

// sendMessages sends the first msgs tx headers and returns how many
// datagrams went out.
func (m *mmsgBatcher) sendMessages(msgs int) (done, calls int, err error) {
	v := &m.tx
	for first := 0; first < msgs; {
		v.n, v.errno = 0, 0
		v.vlen = msgs - first
		hdrs := v.hdrs
		v.hdrs = v.hdrs[first:] // sendmmsg takes the rest from here
		err = m.rc.Write(m.sendFn)
		v.hdrs = hdrs
		calls++
		if err == nil && v.errno != 0 {
			err = os.NewSyscallError("sendmmsg", v.errno)
		}
		for _, c := range v.counts[first : first+v.n] {
			done += c
			if c > 1 {
				m.stats.txGSO.Add(1)
			}
		}
		first += v.n
		if err != nil || v.n == 0 {
			break
		}
	}
	for i := range v.packed {
		v.iovs[i].Base = nil // keep no reference to the caller's buffers
	}
	return done, calls, err
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
	if e != 0 {
		v.n = 0
	}
	return true
}

func (m *mmsgBatcher) writeOne(p *Packet) (sent, calls int, err error) {
	v := &m.tx
	v.one = p.Buf[:p.N]
	v.hdrs[0].Hdr.Namelen = encodeSockaddr(&v.names[0], p.Addr, m.v6)
	v.n, v.errno = 0, 0
	err = m.rc.Write(m.sendOneFn)
	v.one = nil
	if err == nil && v.errno != 0 {
		err = os.NewSyscallError("sendto", v.errno)
	}
	if err != nil {
		return 0, 1, err
	}
	return 1, 1, nil
}

func (m *mmsgBatcher) sendto(fd uintptr) bool {
	v := &m.tx
	var base unsafe.Pointer
	if len(v.one) > 0 {
		base = unsafe.Pointer(&v.one[0])
	}
	call := func() syscall.Errno {
		_, _, e := unix.Syscall6(unix.SYS_SENDTO, fd, uintptr(base), uintptr(len(v.one)),
			unix.MSG_DONTWAIT, uintptr(unsafe.Pointer(&v.names[0])), uintptr(v.hdrs[0].Hdr.Namelen))
		return e
	}
	e := call()
	for e == unix.EINTR {
		e = call()
	}
	if e == unix.EAGAIN {
		return false
	}
	v.errno = e
	return true
}

// ---- addresses ----

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
			// The interface index is a valid zone for net and netip and
			// needs no lookup.
			a = a.WithZone(strconv.FormatUint(uint64(sa.Scope_id), 10))
		}
		return netip.AddrPortFrom(a, port)
	}
	return Addr{}
}

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
