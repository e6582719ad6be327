package host

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
)

// demoObject compiles testdata/demo.naam.
func demoObject(t testing.TB) *bytecode.Object {
	t.Helper()
	src, err := os.ReadFile("testdata/demo.naam")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := compiler.Compile(lang.NewFileSet(), "demo.naam", src)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// startDemo starts a node with the demo program and its region.
func startDemo(t testing.TB, cfg Config) *Node {
	t.Helper()
	n, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	if _, err := n.Register("counters", 16*8, RegionOptions{Writable: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Install(demoObject(t)); err != nil {
		t.Fatal(err)
	}
	return n
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// scrapeMetrics returns n's metrics as a scraper sees them.
func scrapeMetrics(t *testing.T, n *Node) string {
	t.Helper()
	srv := httptest.NewServer(n.MetricsHandler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
