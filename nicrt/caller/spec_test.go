package caller

import (
	"testing"

	"github.com/naam-project/naam/internal/testing/spectable"
)

// TestSpecDefaults checks ClientConfig's defaults against spec/nic.md's table.
func TestSpecDefaults(t *testing.T) {
	spectable.Read(t, "../../spec/nic.md").CheckDefaults(t, "ClientConfig defaults", ClientConfig{}.withDefaults(), "Node", "Server", "Keys", "MaxPayload", "FirstID")
}
