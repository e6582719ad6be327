package transport

import (
	"syscall"

	"golang.org/x/sys/unix"
)

func controlReusePort(c syscall.RawConn) error {
	var opErr error
	err := c.Control(func(fd uintptr) {
		opErr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	})
	if err != nil {
		return err
	}
	return opErr
}

func socketBufferSizes(c syscall.RawConn) (read, write int, err error) {
	var rerr, werr error
	cerr := c.Control(func(fd uintptr) {
		read, rerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
		write, werr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
	})
	for _, e := range []error{cerr, rerr, werr} {
		if e != nil {
			return 0, 0, e
		}
	}
	return read, write, nil
}
