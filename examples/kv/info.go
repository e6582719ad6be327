package kv

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/naam-project/naam/nicrt/wire"
)

// Info is what a client needs to reach a table served over the network:
// kvserver writes it as JSON and kvclient reads it. The tenant's MAC
// secret is not in it; both ends are given it separately.
type Info struct {
	Addr   string         `json:"addr"` // the server's UDP address
	Node   uint32         `json:"node"` // the server's node id
	Tenant uint32         `json:"tenant"`
	Config Config         `json:"config"`
	IDs    HandlerIDs     `json:"handlers"`
	Region wire.RegionRef `json:"region"` // for the one-sided verbs
}

// WriteInfo writes info to path as JSON.
func WriteInfo(path string, info Info) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

// ReadInfo reads what WriteInfo wrote.
func ReadInfo(path string) (Info, error) {
	var info Info
	b, err := os.ReadFile(path)
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("kv: %s: %w", path, err)
	}
	return info, info.Config.Validate()
}
