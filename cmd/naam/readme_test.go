package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestReadmeTutorial runs the README's tutorial as written: the script
// is made from README.md, between <!-- tutorial --> and <!-- /tutorial -->,
// each time, so the two cannot drift. A ```console block is commands
// ("$ " lines) each followed by its whole stdout; a block whose info
// string names a file ("```naam greeter.naam") is that file, in the
// directory the commands have cd'd to.
//
// The test changes only what a test must: naam is this test binary and
// naamc is built here (for "go install"), the node listens on a port of
// the kernel's choosing in place of 127.0.0.1:7000 (every 127.0.0.1:7000
// becomes its address), "kill %1" stops it, and the working directory
// stands for the checkout: a go.mod there points the tutorial's imports
// at this repository.
func TestReadmeTutorial(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the tutorial builds naamc and a Go program")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	script, err := tutorialScript(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tutorial.txtar"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "naamc"), "../naamc").CombinedOutput(); err != nil {
		t.Fatalf("go build naamc: %v\n%s", err, out)
	}
	goEnv := map[string]string{}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT", "GOFLAGS", "CGO_ENABLED", "CC"} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatal(err)
		}
		goEnv[k] = strings.TrimSpace(string(out))
	}
	gomod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: dir,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitaddr": waitAddr,
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			for k, v := range goEnv {
				env.Setenv(k, v)
			}
			// The checkout's module, offline: what the module cache holds.
			env.Setenv("GOFLAGS", strings.TrimSpace(goEnv["GOFLAGS"]+" -mod=mod"))
			env.Setenv("GOPROXY", "off")
			env.Setenv("HOME", env.WorkDir)
			// The checkout's requirements as the tutorial's own, so that
			// the module graph is pruned as the checkout's is: a go.mod
			// listing only naam makes -mod=mod load every dependency's
			// go.mod, some of which an offline module cache filled by
			// building the checkout does not hold.
			mod := strings.Replace(string(gomod), "module github.com/naam-project/naam\n", "module tutorial\n", 1) +
				fmt.Sprintf("\nrequire github.com/naam-project/naam v0.0.0\n\nreplace github.com/naam-project/naam => %s\n", repo)
			if err := os.WriteFile(filepath.Join(env.WorkDir, "go.mod"), []byte(mod), 0o644); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(env.WorkDir, "go.sum"), sum, 0o644)
		},
	})
}

// tutorialScript turns the README's tutorial into a testscript.
func tutorialScript(readme string) (string, error) {
	_, rest, ok := strings.Cut(readme, "<!-- tutorial -->\n")
	if !ok {
		return "", fmt.Errorf("README.md has no <!-- tutorial --> marker")
	}
	tut, _, ok := strings.Cut(rest, "<!-- /tutorial -->")
	if !ok {
		return "", fmt.Errorf("README.md has no <!-- /tutorial --> marker")
	}
	const node = "127.0.0.1:7000"
	var script, files strings.Builder
	script.WriteString("# Made from README.md's tutorial by TestReadmeTutorial.\n\n")
	cwd, expects, commands := "", 0, 0
	lines := strings.Split(tut, "\n")
	for i := 0; i < len(lines); i++ {
		info, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			continue
		}
		var block []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			block = append(block, lines[i])
		}
		if i == len(lines) {
			return "", fmt.Errorf("README.md: the tutorial's block %q does not end", info)
		}
		kind, file, _ := strings.Cut(info, " ")
		if file != "" {
			fmt.Fprintf(&files, "-- %s --\n%s\n", filepath.Join(cwd, file), strings.Join(block, "\n"))
			continue
		}
		if kind != "console" {
			continue
		}
		for j := 0; j < len(block); j++ {
			cmd, ok := strings.CutPrefix(block[j], "$ ")
			if !ok {
				return "", fmt.Errorf("README.md: %q in a console block is output of no command", block[j])
			}
			var out []string
			for j+1 < len(block) && !strings.HasPrefix(block[j+1], "$ ") {
				j++
				out = append(out, block[j])
			}
			commands++
			switch {
			case strings.HasPrefix(cmd, "go install "):
				script.WriteString("# " + cmd + ": naam and naamc are the test's\n")
				continue
			case strings.HasPrefix(cmd, "mkdir "), strings.HasPrefix(cmd, "cd "):
				script.WriteString(cmd + "\n")
				if d, ok := strings.CutPrefix(cmd, "cd "); ok {
					cwd = filepath.Join(cwd, d)
				}
				continue
			case cmd == "kill %1":
				script.WriteString("kill -INT node\nwait node\n")
				continue
			case strings.HasSuffix(cmd, " &"):
				if !strings.Contains(cmd, "--listen "+node) {
					return "", fmt.Errorf("README.md: background command %q is not the node on %s", cmd, node)
				}
				cmd = strings.Replace(strings.TrimSuffix(cmd, " &"), "--listen "+node, "--listen 127.0.0.1:0 --addr-file $WORK/addr", 1)
				fmt.Fprintf(&script, "exec %s &node&\nwaitaddr $WORK/addr ADDR\n", cmd)
				continue
			}
			fmt.Fprintf(&script, "exec %s\n", strings.ReplaceAll(cmd, node, "$ADDR"))
			if len(out) == 0 {
				script.WriteString("! stdout .\n")
				continue
			}
			expects++
			name := fmt.Sprintf("expect/%d", expects)
			fmt.Fprintf(&script, "cmp stdout $WORK/%s\n", name)
			fmt.Fprintf(&files, "-- %s --\n%s\n", name, strings.Join(out, "\n"))
		}
	}
	if commands == 0 {
		return "", fmt.Errorf("README.md: the tutorial has no commands")
	}
	return script.String() + "\n" + files.String(), nil
}
