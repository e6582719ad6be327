//go:build linux

package xdp

import (
	"io"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// attachXDP attaches prog to the interface as a BPF link.
func attachXDP(prog *ebpf.Program, ifindex int, generic bool) (io.Closer, error) {
	flags := link.XDPDriverMode
	if generic {
		flags = link.XDPGenericMode
	}
	return link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifindex, Flags: flags})
}
