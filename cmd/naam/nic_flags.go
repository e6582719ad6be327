package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/naam-project/naam/nicrt"
)

// nicFlags are the NIC model's settings that naam node and naam bench
// share: pacing, the host load, the placement policy, fair queueing, core
// partitions and the tenants' quotas. Each value is checked as it is set, so that a bad
// one in a --config file is reported with its field.
type nicFlags struct {
	hostLoad  hostLoadValue
	placement placementValue
	paced     bool
	fair      bool
	partition bool
	quotas    quotaValue
	// pacedSet and placementSet: --paced and --placement were given (naam
	// bench isolation has defaults of its own).
	pacedSet, placementSet bool
}

// register adds the flags; fair is --fair's default.
func (f *nicFlags) register(fl *pflag.FlagSet, fair bool) {
	fl.Var(&f.hostLoad, "host-load", "share of the host cores' time a modelled application takes, 0…1 (1: host cores take nothing)")
	fl.Var(&f.placement, "placement", "where handlers run: auto (bound, helpers, spill), nic (NIC cores wherever the bound fits, no spill), host, or steer (NIC or host cores per message, by expected completion)")
	fl.BoolVar(&f.paced, "paced", false, "cores take the modelled service time of each run in wall time (sleeping, not spinning)")
	fl.BoolVar(&f.fair, "fair", fair, "per-tenant queues on every core, served by deficit round robin priced by the handlers' proven bounds")
	fl.BoolVar(&f.partition, "partition", false, "cores of its own for every tenant active in the last 10 ms, by its quota's weight (at least one each): no other tenant's run delays its messages; not work-conserving")
	fl.Var(&f.quotas, "tenant-quota", "a tenant's quota under --fair (and its weight under --partition): TENANT:weight=W,max-queued=N (either part may be left out; repeatable)")
}

// apply sets what the flags say in c.
func (f nicFlags) apply(c *nicrt.Config) {
	c.HostLoad, c.Placement, c.Paced, c.Fair = float64(f.hostLoad), nicrt.PlacementPolicy(f.placement), f.paced, f.fair
	c.Partition = f.partition
	if len(f.quotas) > 0 {
		c.Quotas = map[uint64]nicrt.TenantQuota(f.quotas)
	}
}

// hostLoadValue is --host-load: 0 … 1.
type hostLoadValue float64

func (v *hostLoadValue) String() string { return strconv.FormatFloat(float64(*v), 'g', -1, 64) }
func (v *hostLoadValue) Type() string   { return "L" }
func (v *hostLoadValue) Set(s string) error {
	l, err := strconv.ParseFloat(s, 64)
	if err != nil || l < 0 || l > 1 {
		return fmt.Errorf("--host-load %s: want 0 … 1", s)
	}
	*v = hostLoadValue(l)
	return nil
}

// placementValue is --placement.
type placementValue nicrt.PlacementPolicy

func (v *placementValue) String() string { return nicrt.PlacementPolicy(*v).String() }
func (v *placementValue) Type() string   { return "auto|nic|host|steer" }
func (v *placementValue) Set(s string) error {
	p, err := nicrt.ParsePlacementPolicy(s)
	if err != nil {
		return fmt.Errorf("--placement: %v", err)
	}
	*v = placementValue(p)
	return nil
}

// quotaValue is the repeatable --tenant-quota.
type quotaValue map[uint64]nicrt.TenantQuota

func (v *quotaValue) String() string {
	var parts []string
	for t, q := range *v {
		parts = append(parts, fmt.Sprintf("%d:weight=%d,max-queued=%d", t, q.Weight, q.MaxQueued))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
func (v *quotaValue) Type() string { return "TENANT:weight=W,max-queued=N" }
func (v *quotaValue) Set(s string) error {
	tenant, q, err := parseQuota(s)
	if err != nil {
		return err
	}
	if *v == nil {
		*v = quotaValue{}
	}
	if _, dup := (*v)[tenant]; dup {
		return fmt.Errorf("--tenant-quota %q: tenant %d given twice", s, tenant)
	}
	(*v)[tenant] = q
	return nil
}

// parseQuota reads TENANT:weight=W,max-queued=N.
func parseQuota(s string) (uint64, nicrt.TenantQuota, error) {
	var q nicrt.TenantQuota
	bad := func(format string, a ...any) (uint64, nicrt.TenantQuota, error) {
		return 0, q, fmt.Errorf("--tenant-quota %q: %s", s, fmt.Sprintf(format, a...))
	}
	ts, rest, ok := strings.Cut(s, ":")
	tenant, err := strconv.ParseUint(ts, 10, 32)
	if !ok || err != nil || rest == "" {
		return bad("want TENANT:weight=W,max-queued=N, TENANT a tenant id")
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(rest, ",") {
		key, val, _ := strings.Cut(part, "=")
		if seen[key] {
			return bad("%s given twice", key)
		}
		seen[key] = true
		n, err := strconv.ParseUint(val, 10, 32)
		switch {
		case key == "weight" && (err != nil || n < 1 || n > nicrt.MaxWeight):
			return bad("weight %q: want 1 … %d", val, nicrt.MaxWeight)
		case key == "weight":
			q.Weight = uint32(n)
		case key == "max-queued" && (err != nil || n < 1 || n > 1<<20):
			return bad("max-queued %q: want 1 … %d messages per core", val, 1<<20)
		case key == "max-queued":
			q.MaxQueued = int(n)
		default:
			return bad("%q: want weight=W or max-queued=N", part)
		}
	}
	return tenant, q, nil
}
