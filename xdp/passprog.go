package xdp

import (
	"fmt"
	"io"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
)

// AttachPass attaches, in native mode, an XDP program that passes every
// frame to interface ifindex, and returns what detaches it. The far end
// of a veth pair needs one: veth takes the frames an XDP program sends
// back with XDP_TX only when its peer runs XDP itself. Call it in the
// interface's namespace.
func AttachPass(ifindex int) (io.Closer, error) {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.XDP, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, xdpPass), asm.Return()}})
	if err != nil {
		return nil, fmt.Errorf("xdp: the pass program: %w", err)
	}
	l, err := link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifindex, Flags: link.XDPDriverMode})
	if err != nil {
		prog.Close()
		return nil, fmt.Errorf("xdp: attach the pass program to interface %d: %w", ifindex, err)
	}
	return passLink{l, prog}, nil
}

type passLink struct {
	l    link.Link
	prog *ebpf.Program
}

func (p passLink) Close() error {
	err := p.l.Close()
	if e := p.prog.Close(); err == nil {
		err = e
	}
	return err
}
