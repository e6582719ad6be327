package server

import (
	"testing"

	"github.com/naam-project/naam/internal/testing/spectable"
)

// TestSpecDefaults checks ServerConfig's defaults against spec/nic.md's table.
func TestSpecDefaults(t *testing.T) {
	spectable.Read(t, "../../spec/nic.md").CheckDefaults(t, "ServerConfig defaults", ServerConfig{}.withDefaults(), "Node", "Keys", "MaxPayload", "Peers")
}
