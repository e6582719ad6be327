package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/naam-project/naam/host"
)

// The metrics listener's /healthz answers while the process serves;
// /readyz only between the node's setup and the start of its shutdown.
func TestHealthMux(t *testing.T) {
	n, err := host.Start(host.Config{Name: "health"})
	if err != nil {
		t.Fatal(err)
	}
	var ready atomic.Bool
	srv := httptest.NewServer(healthMux(n, &ready))
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		step, path string
		code       int
		body       string
	}{
		{"setting up", "/healthz", http.StatusOK, "ok\n"},
		{"setting up", "/readyz", http.StatusServiceUnavailable, "not ready: registering regions and installing programs\n"},
		{"ready", "/readyz", http.StatusOK, "ready\n"},
		{"ready", "/metrics", http.StatusOK, `naam_cluster_members{node="health"} 1`},
		{"closed", "/readyz", http.StatusServiceUnavailable, "not ready: host: node health is shutting down"},
		{"closed", "/healthz", http.StatusOK, "ok\n"},
	} {
		switch tc.step {
		case "ready":
			ready.Store(true)
		case "closed":
			n.Close()
		}
		code, body := get(tc.path)
		if code != tc.code || !strings.Contains(body, tc.body) {
			t.Errorf("%s: GET %s = %d %q, want %d with %q", tc.step, tc.path, code, body, tc.code, tc.body)
		}
	}
}
