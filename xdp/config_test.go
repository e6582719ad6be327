package xdp

import (
	"strings"
	"testing"
)

func TestConfig(t *testing.T) {
	c, err := Config{Node: 1, Port: 2}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxPayload != 1416 || c.MaxReply != DefaultMaxReply || c.CacheBytes != DefaultCacheBytes || c.MaxPeers != DefaultMaxPeers || c.Credits != DefaultCredits {
		t.Errorf("defaults %+v", c)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Port: 1}, "Node is 0"},
		{Config{Node: 1}, "Port is 0"},
		{Config{Node: 1, Port: 1, MaxPayload: 9000}, "MaxPayload 9000"},
		{Config{Node: 1, Port: 1, MaxReply: 12}, "MaxReply 12"},
		{Config{Node: 1, Port: 1, CacheBytes: 60}, "CacheBytes 60"},
		{Config{Node: 1, Port: 1, CacheBytes: 2000}, "CacheBytes 2000"},
		{Config{Node: 1, Port: 1, MaxPeers: 3}, "MaxPeers 3"},
		{Config{Node: 1, Port: 1, MaxHandlers: -1}, "MaxHandlers -1"},
	} {
		if _, err := tc.cfg.withDefaults(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func TestProbe(t *testing.T) {
	needKernel(t)
	if err := Probe(); err != nil {
		t.Fatal(err)
	}
}

// TestInstallErrors: what Install refuses outright, and what it serves
// elsewhere with the reason.
func TestInstallErrors(t *testing.T) {
	tier := newTestTier(t, Config{CacheBytes: 64})
	obj, rep := compile(t, "inc.naam", incSource)
	spec := HandlerSpec{ID: 16, Tenant: testTenant, Object: obj, Report: rep, ReplySize: 8}
	bad := []struct {
		mod  func(*HandlerSpec)
		want string
	}{
		{func(h *HandlerSpec) { h.ID = 3 }, "a verb's"},
		{func(h *HandlerSpec) { h.Report = nil }, "no verifier report"},
		{func(h *HandlerSpec) { h.Handler = 1 }, "no handler 1"},
		{func(h *HandlerSpec) { h.ReplySize = 12 }, "reply buffer of 12"},
	}
	for _, tc := range bad {
		h := spec
		tc.mod(&h)
		if err := tier.Install(h); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Install: %v, want %q", err, tc.want)
		}
	}
	h := spec
	h.ReplySize = 16 // 56 + 16 > 64
	err := tier.Install(h)
	if ns, ok := err.(*NotServed); !ok || !strings.Contains(ns.Reason, "reply-cache slot") {
		t.Errorf("a reply over the cache slot: %v", err)
	}
	if err := tier.Install(spec); err != nil {
		t.Fatal(err)
	}
	if err := tier.Install(spec); err == nil || !strings.Contains(err.Error(), "already installed") {
		t.Errorf("installed twice: %v", err)
	}
	if !tier.Served(16) || tier.Served(17) {
		t.Error("Served")
	}
	if err := tier.Uninstall(17); err == nil {
		t.Error("Uninstall of nothing")
	}
}
