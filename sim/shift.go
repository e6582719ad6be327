package sim

import (
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/steer"
)

// The shift experiment (naam bench shift, at cluster scale): the first
// host_load event with a load above 0 congests its nodes at At; the next
// host_load event that names the first of them releases them. On those
// nodes the simulator follows the steering decisions that are not probes:
// how long after the congestion the last of them still sent a message to
// a host core (ShiftNanos), and how long after the release each took to
// send one there again (ReturnNanos, the slowest).

type shiftState struct {
	on       bool
	at, end  int64 // congestion and release (end −1: none)
	load     float64
	nodes    []int32
	lastHost []int64 // per shift node: the last host decision during the congestion
	back     []int64 // per shift node: the first host decision after the release (−1: none)
	steered  []bool  // per shift node: a decision during the congestion
	place    [3][2]uint64
}

// ShiftResult is the shift experiment's figures on the congested nodes.
type ShiftResult struct {
	AtNanos  int64 `json:"at_ns"`
	EndNanos int64 `json:"end_ns"` // −1: never released
	HostLoad Num   `json:"host_load"`
	Nodes    int   `json:"nodes"`
	// HostShareBefore, During and After are the share of the nodes' runs
	// on host cores before the congestion, during it and after it.
	HostShareBefore Num `json:"host_share_before"`
	HostShareDuring Num `json:"host_share_during"`
	HostShareAfter  Num `json:"host_share_after"`
	// RunsBefore, During and After are the nodes' runs in each phase
	// (a share of no runs is 0).
	RunsBefore uint64 `json:"runs_before"`
	RunsDuring uint64 `json:"runs_during"`
	RunsAfter  uint64 `json:"runs_after"`
	// ShiftNanos is how long after At the last non-probe decision for a
	// host core was made on the nodes (0: none after At).
	ShiftNanos int64 `json:"shift_ns"`
	// ReturnNanos is the longest a node took after the release to choose
	// a host core again; NotReturned counts nodes that had decisions
	// after the release and never chose the host.
	ReturnNanos int64 `json:"return_ns"`
	NotReturned int   `json:"not_returned"`
}

func (sh *shiftState) init(s *sim) {
	sh.end = -1
	first := -1
	for i, e := range s.sc.Events {
		if e.Kind != "host_load" {
			continue
		}
		if first < 0 && e.HostLoad > 0 {
			first = i
			sh.on, sh.at, sh.load = true, int64(e.At), e.HostLoad
			e.Nodes.each(func(n int) {
				if s.nodes[n].shiftIdx < 0 {
					s.nodes[n].shiftIdx = int32(len(sh.nodes))
					sh.nodes = append(sh.nodes, int32(n))
				}
			})
			continue
		}
		if first >= 0 && sh.end < 0 && e.At >= s.sc.Events[first].At {
			hit := false
			e.Nodes.each(func(n int) { hit = hit || int32(n) == sh.nodes[0] })
			if hit {
				sh.end = int64(e.At)
			}
		}
	}
	sh.lastHost = make([]int64, len(sh.nodes))
	sh.back = make([]int64, len(sh.nodes))
	sh.steered = make([]bool, len(sh.nodes))
	for i := range sh.back {
		sh.back[i] = -1
	}
}

func (sh *shiftState) phase(t int64) int {
	switch {
	case t < sh.at:
		return 0
	case sh.end < 0 || t < sh.end:
		return 1
	}
	return 2
}

func (sh *shiftState) ran(s *sim, n int32, place nicrt.Placement, start int64) {
	if !sh.on || s.nodes[n].shiftIdx < 0 {
		return
	}
	sh.place[sh.phase(start)][b2i(place.OnHost())]++
}

// decided follows a steering decision on node n now.
func (sh *shiftState) decided(s *sim, n int32, d steer.Decision) {
	if !sh.on || d.Probe {
		return
	}
	i := s.nodes[n].shiftIdx
	if i < 0 {
		return
	}
	switch sh.phase(s.now) {
	case 1:
		sh.steered[i] = true
		if d.Location == steer.Host {
			sh.lastHost[i] = s.now
		}
	case 2:
		if sh.back[i] < 0 && d.Location == steer.Host {
			sh.back[i] = s.now
		}
	}
}

func (sh *shiftState) result(s *sim) *ShiftResult {
	if !sh.on {
		return nil
	}
	r := &ShiftResult{AtNanos: sh.at, EndNanos: sh.end, HostLoad: Num(sh.load), Nodes: len(sh.nodes)}
	hs := func(p int) Num { return share(sh.place[p][1], sh.place[p][0]+sh.place[p][1]) }
	r.HostShareBefore, r.HostShareDuring, r.HostShareAfter = hs(0), hs(1), hs(2)
	r.RunsBefore, r.RunsDuring, r.RunsAfter = sh.place[0][0]+sh.place[0][1], sh.place[1][0]+sh.place[1][1], sh.place[2][0]+sh.place[2][1]
	for i := range sh.nodes {
		if sh.lastHost[i] > 0 {
			r.ShiftNanos = max(r.ShiftNanos, sh.lastHost[i]-sh.at)
		}
		if sh.end >= 0 {
			if sh.back[i] >= 0 {
				r.ReturnNanos = max(r.ReturnNanos, sh.back[i]-sh.end)
			}
		}
	}
	if sh.end >= 0 {
		for i := range sh.nodes {
			if sh.back[i] < 0 && sh.steered[i] {
				r.NotReturned++
			}
		}
	}
	return r
}
