package main

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDeployFiles reads docs/deploy as naam node would: every node-*.json
// is a configuration whose keys are flags and whose values parse (regions,
// programs, addresses); the systemd unit's and the container's command
// lines are naam node flags; docs/cluster.md shows node-1.json as it is.
func TestDeployFiles(t *testing.T) {
	files, _ := filepath.Glob("../../docs/deploy/node-*.json")
	if len(files) != 3 {
		t.Fatalf("%d node configurations in docs/deploy, want 3", len(files))
	}
	for _, file := range files {
		cmd := newNodeCmd()
		if err := mergeConfig(cmd, file); err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		fl := cmd.Flags()
		get := func(name string) string { return fl.Lookup(name).Value.String() }
		for _, name := range []string{"listen", "gossip"} {
			if _, err := netip.ParseAddrPort(get(name)); err != nil {
				t.Errorf("%s: %s: %v", file, name, err)
			}
		}
		if _, err := netip.ParseAddr(get("advertise")); err != nil {
			t.Errorf("%s: advertise: %v", file, err)
		}
		regions, _ := fl.GetStringArray("region")
		for _, r := range regions {
			if _, err := parseRegion(r); err != nil {
				t.Errorf("%s: %v", file, err)
			}
		}
		programs, _ := fl.GetStringArray("program")
		for _, p := range programs {
			if _, err := parseProgram(p); err != nil {
				t.Errorf("%s: %v", file, err)
			}
		}
		joins, _ := fl.GetStringArray("join")
		for _, j := range joins {
			if _, err := netip.ParseAddrPort(j); err != nil {
				t.Errorf("%s: join: %v", file, err)
			}
		}
		if get("secret-file") == "" || get("name") == "" {
			t.Errorf("%s: no name or no secret_file", file)
		}
	}

	for _, tc := range []struct {
		file string
		line *regexp.Regexp // its naam node command line, after "node"
	}{
		{"../../docs/deploy/naam.service", regexp.MustCompile(`(?m)^ExecStart=/usr/local/bin/naam node (.*)$`)},
		{"../../docs/deploy/Containerfile", regexp.MustCompile(`(?m)^CMD \[(.*)\]$`)},
	} {
		b, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		m := tc.line.FindSubmatch(b)
		if m == nil {
			t.Errorf("%s: no naam node command line", tc.file)
			continue
		}
		args := strings.Fields(string(m[1]))
		if strings.HasPrefix(string(m[1]), `"`) {
			args = nil
			if err := json.Unmarshal([]byte("["+string(m[1])+"]"), &args); err != nil {
				t.Errorf("%s: %v", tc.file, err)
			}
		}
		if err := newNodeCmd().ParseFlags(args); err != nil {
			t.Errorf("%s: naam node %s: %v", tc.file, strings.Join(args, " "), err)
		}
	}
	if b, err := os.ReadFile("../../docs/deploy/Containerfile"); err != nil || !strings.Contains(string(b), `ENTRYPOINT ["/usr/local/bin/naam", "node"]`) {
		t.Errorf("the Containerfile's entry point is not naam node (%v)", err)
	}

	page, err := os.ReadFile("../../docs/cluster.md")
	if err != nil {
		t.Fatal(err)
	}
	one, err := os.ReadFile("../../docs/deploy/node-1.json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "```json\n"+string(one)+"```") {
		t.Error("docs/cluster.md does not show docs/deploy/node-1.json as it is")
	}
}
