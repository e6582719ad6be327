//go:build !linux

package xdp

import (
	"errors"
	"io"

	"github.com/cilium/ebpf"
)

func attachXDP(*ebpf.Program, int, bool) (io.Closer, error) {
	return nil, errors.New("xdp: XDP needs Linux")
}
