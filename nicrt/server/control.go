package server

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/naam-project/naam/nicrt"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt/wire"
)

// uploadKey names an object upload: its sender, tenant and upload id.
type uploadKey struct {
	src, tenant uint32
	upload      uint64
}

// upload is an object file being assembled, chunk by chunk, in order.
type upload struct {
	total uint64
	data  []byte
	opts  nicrt.InstallOptions // the first chunk's region bindings
	last  time.Time            // when its last chunk came
}

// wireRegion is a region registered over the wire, counted against the
// register limits until it is unregistered.
type wireRegion struct {
	tenant uint32
	size   uint64
}

// runControl runs a control packet's op and answers it like a request
// (the window and the reply cache have already let it through once). It
// runs on a goroutine of its own: an install verifies and an uninstall
// drains, and neither may hold up an rx loop. The op holds one of its
// tenant's MaxControlOps (startControl).
func (in *inflight) runControl(body []byte) {
	s := in.s
	payload, st, why := s.control(&in.hdr, body)
	s.endControl(in.hdr.Tenant)
	codec, _ := wire.NewCodec(wire.Config{Keys: s.cfg.Keys, MaxPayload: s.cfg.MaxPayload})
	in.answerControl(codec, payload, st, why)
}

// answerControl seals a control op's reply (payload, or an error reply
// with st and the text why), keeps it in the reply cache and sends it.
func (in *inflight) answerControl(codec *wire.Codec, payload []byte, st nicrt.Status, why string) {
	s, q := in.s, in.q
	req := &in.hdr
	h := wire.Header{
		Type: wire.TypeReply, Flags: repeatFlag(req), Credits: s.credits(), Tenant: req.Tenant, Handler: req.Handler,
		RequestID: req.RequestID, Src: s.cfg.Node, Dst: req.Src,
	}
	if st != nicrt.StatusOK {
		h.Type, h.Status = wire.TypeErrorReply, st.Wire()
		payload = []byte(why[:min(len(why), codec.MaxPayload())])
	}
	b, err := codec.Encode(q.tx.Buffer(), &h, payload)
	if err != nil { // a reply body over the payload limit
		s.ctr.encodeErrors.Add(1)
		h.Type, h.Status = wire.TypeErrorReply, nicrt.StatusTooLarge.Wire()
		b, _ = codec.Encode(b[:0], &h, []byte("the reply is over the payload limit"))
	}
	if h.Type == wire.TypeReply {
		s.ctr.replies.Add(1)
	} else {
		s.ctr.errorReplies.Add(1)
	}
	in.cache(slotDone, b)
	q.tx.Push(in.addr, b)
	in.release()
}

// startControl takes one of tenant's MaxControlOps for an op about to
// run, or says why none is free: a tenant's flood of control packets
// runs at most that many ops at once, and leaves the others' alone.
func (s *Server) startControl(tenant uint32) string {
	s.ctlMu.Lock()
	defer s.ctlMu.Unlock()
	if n := s.controlOps[tenant]; n >= s.cfg.MaxControlOps {
		return fmt.Sprintf("control: tenant %d has %d control ops running, ServerConfig.MaxControlOps (%d)", tenant, n, s.cfg.MaxControlOps)
	}
	s.controlOps[tenant]++
	return ""
}

// endControl gives back what startControl took.
func (s *Server) endControl(tenant uint32) {
	s.ctlMu.Lock()
	if s.controlOps[tenant]--; s.controlOps[tenant] == 0 {
		delete(s.controlOps, tenant)
	}
	s.ctlMu.Unlock()
}

// control runs one op for the packet's tenant and returns the reply body,
// or the status and text of the error reply.
func (s *Server) control(req *wire.Header, body []byte) ([]byte, nicrt.Status, string) {
	m, err := wire.ParseControl(wire.Op(req.Handler), body)
	if err != nil {
		return nil, nicrt.StatusBadControl, err.Error()
	}
	tenant := uint64(req.Tenant)
	var reply wire.Control
	switch m := m.(type) {
	case *wire.Register:
		r, why := s.register(req.Tenant, m)
		if why != "" {
			return nil, nicrt.StatusControlFailed, why
		}
		reply = &wire.RegisterReply{Region: r.ID, Key: r.Key}
	case *wire.Unregister:
		if why := s.unregister(req.Tenant, uint32(m.Region)); why != "" { // validated: 32 bits
			return nil, nicrt.StatusControlFailed, why
		}
		return nil, nicrt.StatusOK, ""
	case *wire.Uninstall:
		p, ok := s.nic.Program(m.Program)
		if !ok || p.Tenant != tenant {
			return nil, nicrt.StatusControlFailed, fmt.Sprintf("tenant %d has no program %d", tenant, m.Program)
		}
		if s.cfg.Front != nil {
			s.cfg.Front.Uninstalling(p)
		}
		if err := s.nic.Uninstall(p); err != nil {
			return nil, nicrt.StatusControlFailed, err.Error()
		}
		return nil, nicrt.StatusOK, ""
	case *wire.StatsRequest:
		return s.statsPage(tenant, m)
	case *wire.DescribeRequest:
		return s.describe(tenant, m.Cursor)
	case *wire.Install:
		r, st, why := s.install(req, m)
		if st != nicrt.StatusOK {
			return nil, st, why
		}
		reply = r
	}
	b, err := wire.AppendControl(nil, reply)
	if err != nil {
		return nil, nicrt.StatusControlFailed, err.Error()
	}
	return b, nicrt.StatusOK, ""
}

// statsPage answers one page of the counters a tenant may read: the
// node's and the server's, and of the handlers only its own and the
// verbs' (Stats.ForTenant), those under the prefix and after m.After, as
// many as fit a packet. A page never goes over the payload limit, so
// that reading the counters never counts as an error.
func (s *Server) statsPage(tenant uint64, m *wire.StatsRequest) ([]byte, nicrt.Status, string) {
	all := append(s.nic.Stats().ForTenant(tenant).Counters(), s.Stats().Counters()...)
	if s.cfg.Front != nil {
		all = append(all, s.cfg.Front.Counters()...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	page := &wire.StatsReply{}
	// The body's envelope, then per counter its two keys and values: a
	// bound on the encoding, checked once it is made.
	size := 32
	for _, c := range all {
		if !strings.HasPrefix(c.Name, m.Prefix) || c.Name <= m.After {
			continue
		}
		if size += 24 + len(c.Name); size > s.payloadLimit && len(page.Counters) > 0 {
			page.More = true
			break
		}
		page.Counters = append(page.Counters, wire.Counter{Name: c.Name, Value: c.Value})
	}
	for {
		b, err := wire.AppendControl(nil, page)
		if err != nil {
			return nil, nicrt.StatusControlFailed, err.Error()
		}
		if len(b) <= s.payloadLimit {
			return b, nicrt.StatusOK, ""
		}
		if len(page.Counters) <= 1 {
			return nil, nicrt.StatusControlFailed, fmt.Sprintf("stats: one counter alone needs %d bytes, a packet holds %d", len(b), s.payloadLimit)
		}
		page.Counters, page.More = page.Counters[:len(page.Counters)-1], true
	}
}

// register registers a region for tenant within the register limits
// (ServerConfig.MaxRegisterBytes, MaxTenantRegisterBytes,
// MaxNodeRegisterBytes) and counts it against them; why says why not.
func (s *Server) register(tenant uint32, m *wire.Register) (*nicrt.Region, string) {
	if m.Size > s.cfg.MaxRegisterBytes {
		return nil, fmt.Sprintf("register.size: %d bytes, over ServerConfig.MaxRegisterBytes (%d)", m.Size, s.cfg.MaxRegisterBytes)
	}
	s.ctlMu.Lock()
	defer s.ctlMu.Unlock()
	tenantBytes, nodeBytes := s.registeredLocked(tenant)
	switch {
	case m.Size > s.cfg.MaxTenantRegisterBytes-min(tenantBytes, s.cfg.MaxTenantRegisterBytes):
		return nil, fmt.Sprintf("register: tenant %d holds %d bytes of regions registered over the wire; %d more would pass ServerConfig.MaxTenantRegisterBytes (%d)",
			tenant, tenantBytes, m.Size, s.cfg.MaxTenantRegisterBytes)
	case m.Size > s.cfg.MaxNodeRegisterBytes-min(nodeBytes, s.cfg.MaxNodeRegisterBytes):
		return nil, fmt.Sprintf("register: the node holds %d bytes of regions registered over the wire; %d more would pass ServerConfig.MaxNodeRegisterBytes (%d)",
			nodeBytes, m.Size, s.cfg.MaxNodeRegisterBytes)
	}
	r, err := s.nic.Register(uint64(tenant), m.Name, m.Size, nicrt.RegionOptions{Writable: m.Writable, NICMem: m.Placement == wire.PlacementNICMem})
	switch {
	case errors.Is(err, nicrt.ErrNICMemFull):
		return nil, fmt.Sprintf("register: %v (Config.NICMemBytes)", err)
	case err != nil:
		return nil, "register: " + err.Error()
	}
	s.wireRegions[r.ID] = wireRegion{tenant: tenant, size: m.Size}
	if s.cfg.Front != nil {
		s.cfg.Front.Registered(r)
	}
	return r, ""
}

// registeredLocked returns the bytes of the regions registered over the
// wire that tenant, and all tenants, hold now, forgetting those the host
// has unregistered meanwhile (NIC.Unregister); s.ctlMu is held.
func (s *Server) registeredLocked(tenant uint32) (tenantBytes, nodeBytes uint64) {
	for id, wr := range s.wireRegions {
		if _, ok := s.nic.Region(id); !ok {
			delete(s.wireRegions, id)
			continue
		}
		nodeBytes += wr.size
		if wr.tenant == tenant {
			tenantBytes += wr.size
		}
	}
	return tenantBytes, nodeBytes
}

// unregister removes tenant's region id, as NIC.Unregister does (refused
// while an installed program links it), whoever registered it; why says
// why not.
func (s *Server) unregister(tenant uint32, id uint32) string {
	r, ok := s.nic.Region(id)
	if !ok || r.Tenant != uint64(tenant) {
		return fmt.Sprintf("unregister: tenant %d has no region %d", tenant, id)
	}
	if s.cfg.Front != nil {
		s.cfg.Front.Unregistering(r)
	}
	if err := s.nic.Unregister(r); err != nil {
		if s.cfg.Front != nil {
			s.cfg.Front.Registered(r) // still registered: reachable again
		}
		return "unregister: " + err.Error()
	}
	s.ctlMu.Lock()
	delete(s.wireRegions, id)
	s.ctlMu.Unlock()
	return ""
}

// install adds a chunk to its upload and installs the object once every
// byte is there. Chunks must come in order (a caller sends the next when
// the last is answered). Uploads in progress are bounded per tenant
// (ServerConfig.MaxUploads) and per node (MaxNodeUploads), and dropped
// after UploadTimeout without a chunk.
func (s *Server) install(req *wire.Header, m *wire.Install) (*wire.InstallReply, nicrt.Status, string) {
	key := uploadKey{src: req.Src, tenant: req.Tenant, upload: m.Upload}
	s.ctlMu.Lock()
	now := s.now()
	s.expireUploadsLocked(now)
	u := s.uploads[key]
	if u == nil {
		if m.Offset != 0 {
			s.ctlMu.Unlock()
			return nil, nicrt.StatusBadControl, fmt.Sprintf("install.offset: upload %d has no chunk at 0 here: not begun, or dropped (after ServerConfig.UploadTimeout, %v, without a chunk, or for another tenant's upload at ServerConfig.MaxNodeUploads)", m.Upload, s.cfg.UploadTimeout)
		}
		if why := s.uploadRoomLocked(req.Tenant); why != "" {
			s.ctlMu.Unlock()
			return nil, nicrt.StatusControlFailed, why
		}
		u = &upload{total: m.Total, opts: wire.InstallOptionsOf(m.Regions)}
		s.uploads[key] = u
	}
	u.last = now
	if m.Total != u.total || m.Offset != uint64(len(u.data)) {
		have := len(u.data)
		s.ctlMu.Unlock()
		return nil, nicrt.StatusBadControl, fmt.Sprintf("install.offset: chunk at %d of %d bytes; the upload holds %d of %d", m.Offset, m.Total, have, u.total)
	}
	u.data = append(u.data, m.Data...)
	received := uint64(len(u.data))
	if received < u.total {
		s.ctlMu.Unlock()
		return &wire.InstallReply{Received: received}, nicrt.StatusOK, ""
	}
	delete(s.uploads, key)
	s.ctlMu.Unlock()
	obj, err := bytecode.UnmarshalObject(u.data)
	if err != nil {
		return nil, nicrt.StatusControlFailed, err.Error()
	}
	p, err := s.nic.InstallWith(uint64(req.Tenant), obj, u.opts)
	if err != nil {
		return nil, nicrt.StatusControlFailed, err.Error()
	}
	if s.cfg.Front != nil {
		s.cfg.Front.Installed(p, obj)
	}
	r := &wire.InstallReply{Received: received, Program: p.ID}
	for _, h := range p.Handlers() {
		r.Handlers = append(r.Handlers, wire.InstalledHandler{Name: h.Name, ID: h.ID})
	}
	return r, nicrt.StatusOK, ""
}

// uploadRoomLocked makes room for a new upload of tenant, or says why
// there is none; s.ctlMu is held. A tenant may have MaxUploads in
// progress. At MaxNodeUploads on the node, the idlest upload of the
// tenant with the most gives way if that tenant has at least two more
// than this one: one tenant's stalled uploads never keep another from
// installing.
func (s *Server) uploadRoomLocked(tenant uint32) string {
	count := map[uint32]int{}
	for k := range s.uploads {
		count[k.tenant]++
	}
	if n := count[tenant]; n >= s.cfg.MaxUploads {
		return fmt.Sprintf("install: tenant %d has %d uploads in progress, ServerConfig.MaxUploads (%d)", tenant, n, s.cfg.MaxUploads)
	}
	if len(s.uploads) < s.cfg.MaxNodeUploads {
		return ""
	}
	most := tenant
	for t, n := range count {
		if n > count[most] {
			most = t
		}
	}
	if count[most] < count[tenant]+2 {
		return fmt.Sprintf("install: %d uploads in progress on the node, ServerConfig.MaxNodeUploads (%d), none of a tenant with more than tenant %d's %d",
			len(s.uploads), s.cfg.MaxNodeUploads, tenant, count[tenant])
	}
	var idlest uploadKey
	var at time.Time
	for k, u := range s.uploads {
		if k.tenant == most && (at.IsZero() || u.last.Before(at)) {
			idlest, at = k, u.last
		}
	}
	delete(s.uploads, idlest)
	s.ctr.uploadsDropped.Add(1)
	return ""
}

// expireUploadsLocked drops the uploads that got no chunk for
// UploadTimeout; s.ctlMu is held.
func (s *Server) expireUploadsLocked(now time.Time) {
	for k, u := range s.uploads {
		if now.Sub(u.last) >= s.cfg.UploadTimeout {
			delete(s.uploads, k)
			s.ctr.uploadsExpired.Add(1)
		}
	}
}

// expireUploads is expireUploadsLocked for the server's ticker, so that
// a stalled upload's memory goes back without another install.
func (s *Server) expireUploads() {
	s.ctlMu.Lock()
	s.expireUploadsLocked(s.now())
	s.ctlMu.Unlock()
}

// regionCursor marks a describe cursor that points into the regions.
const regionCursor = 1 << 63

// describe answers one page of the tenant's description: programs in id
// order, then regions in id order, as many as fit a packet. The cursor
// names where the page starts by id, not by position, so that a program
// installed or removed between pages cannot make a page skip an item
// that stayed: 0 is the start, a program id p the programs from p on
// (then every region), regionCursor|r the regions from id r on.
func (s *Server) describe(tenant uint64, cursor uint64) ([]byte, nicrt.Status, string) {
	type item struct {
		prog   *nicrt.Program
		region *nicrt.Region
	}
	var items []item
	if cursor < regionCursor {
		for _, p := range s.nic.Programs(tenant) {
			if p.ID >= cursor {
				items = append(items, item{prog: p})
			}
		}
	}
	for _, r := range s.nic.Regions(tenant) {
		if cursor < regionCursor || uint64(r.ID) >= cursor&^regionCursor {
			items = append(items, item{region: r})
		}
	}
	page := &wire.DescribeReply{Node: s.cfg.Node}
	out, err := wire.AppendControl(nil, page) // an empty last page
	if err != nil {
		return nil, nicrt.StatusControlFailed, err.Error()
	}
	for i, it := range items {
		if it.prog != nil {
			page.Programs = append(page.Programs, programDesc(it.prog))
			page.Next = it.prog.ID + 1
		} else {
			r := it.region
			pl := wire.PlacementHost
			if r.NICMem {
				pl = wire.PlacementNICMem
			}
			page.Regions = append(page.Regions, wire.RegionDesc{Name: r.Name, Region: r.ID, Key: r.Key, Size: r.Size(), Writable: r.Writable, Placement: pl})
			page.Next = regionCursor | (uint64(r.ID) + 1)
		}
		if i == len(items)-1 {
			page.Next = 0
		}
		b, err := wire.AppendControl(nil, page)
		if err != nil {
			return nil, nicrt.StatusControlFailed, err.Error()
		}
		if len(b) > s.payloadLimit {
			if i == 0 {
				return nil, nicrt.StatusControlFailed, fmt.Sprintf("describe: one item alone needs %d bytes, a packet holds %d", len(b), s.payloadLimit)
			}
			break
		}
		out = b
	}
	return out, nicrt.StatusOK, ""
}

// programDesc describes p with what a caller needs to run its handlers
// itself: the digest of its object, and each handler's client eligibility
// from the verifier's report, with the object's bound, which bounds every
// entry's run (the handler's and its access function's).
func programDesc(p *nicrt.Program) wire.ProgramDesc {
	d := wire.ProgramDesc{Program: p.ID, Source: p.Source, Digest: p.Digest}
	for i, h := range p.Handlers() {
		hd := wire.HandlerDesc{Name: h.Name, ID: h.ID, Args: wireFields(h.Args), Results: wireFields(h.Results)}
		if rep := p.Report; rep != nil && i < len(rep.Entries) && rep.Entries[i].ClientEligible {
			hd.Client, hd.MaxInsns = true, max(rep.MaxInsns, 1)
		}
		d.Handlers = append(d.Handlers, hd)
	}
	return d
}

func wireFields(fs []bytecode.Field) []wire.Field {
	var out []wire.Field
	for _, f := range fs {
		out = append(out, wire.Field{Name: f.Name, Type: f.Type, Offset: f.Offset, Size: f.Size})
	}
	return out
}
