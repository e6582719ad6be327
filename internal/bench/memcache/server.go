package memcache

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ErrNotInstalled is Start's error when no memcached binary is found.
var ErrNotInstalled = errors.New("memcache: memcached is not installed (apt-get install memcached)")

// ServerConfig is how Start runs memcached. Zero fields take defaults.
type ServerConfig struct {
	// Binary is the program; default "memcached" looked up in PATH.
	Binary string
	// MemoryMB is memcached's -m, the item memory; default 1024, enough
	// for the benchmark's 1 M records of 64 bytes with their overhead.
	MemoryMB int
	// Threads is memcached's -t; default 2 (the machine's cores).
	Threads int
	// StartTimeout bounds the wait for the port to accept; default 5 s.
	StartTimeout time.Duration
	// IP is the address memcached listens on; default 127.0.0.1.
	IP string
	// Prefix runs memcached through another command, such as
	// {"ip", "netns", "exec", NS} to run it in a network namespace.
	Prefix []string
	// Dial connects to the server for the readiness check; default
	// net.Dialer in this thread's namespace.
	Dial func(ctx context.Context, addr string) (net.Conn, error)
}

// Server is a memcached process that Start runs on 127.0.0.1.
type Server struct {
	Addr   string // host:port
	cmd    *exec.Cmd
	exited chan struct{}
	stderr *strings.Builder
}

// Start runs memcached on a free loopback port and waits until it
// accepts connections. ErrNotInstalled when the binary is missing.
func Start(ctx context.Context, cfg ServerConfig) (*Server, error) {
	bin := cfg.Binary
	if bin == "" {
		bin = "memcached"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotInstalled, err)
	}
	if cfg.MemoryMB <= 0 {
		cfg.MemoryMB = 1024
	}
	if cfg.Threads <= 0 {
		cfg.Threads = 2
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 5 * time.Second
	}
	if cfg.IP == "" {
		cfg.IP = "127.0.0.1"
	}
	if cfg.Dial == nil {
		cfg.Dial = func(ctx context.Context, addr string) (net.Conn, error) {
			d := net.Dialer{Timeout: 100 * time.Millisecond}
			return d.DialContext(ctx, "tcp", addr)
		}
	}
	// The port is found free and then handed to memcached, so another
	// process may take it in between: try a few.
	var lastErr error
	for range 3 {
		s, err := start(ctx, path, cfg)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func start(ctx context.Context, path string, cfg ServerConfig) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("memcache: %w", err)
	}
	args := []string{
		"-l", cfg.IP, "-p", strconv.Itoa(port), "-U", "0",
		"-m", strconv.Itoa(cfg.MemoryMB), "-t", strconv.Itoa(cfg.Threads),
		"-c", "4096",
	}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "root") // memcached refuses root without -u
	}
	s := &Server{Addr: net.JoinHostPort(cfg.IP, strconv.Itoa(port)), exited: make(chan struct{}), stderr: &strings.Builder{}}
	argv := append(append(append([]string(nil), cfg.Prefix...), path), args...)
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("memcache: start %s: %w", path, err)
	}
	go func() {
		s.cmd.Wait()
		close(s.exited)
	}()
	deadline := time.Now().Add(cfg.StartTimeout)
	for {
		conn, err := cfg.Dial(ctx, s.Addr)
		if err == nil {
			conn.Close()
			return s, nil
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("memcache: memcached exited at start: %s", strings.TrimSpace(s.stderr.String()))
		case <-ctx.Done():
			s.Close()
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Close()
			return nil, fmt.Errorf("memcache: memcached did not accept on %s within %v", s.Addr, cfg.StartTimeout)
		}
	}
}

// Close kills the process and waits for it.
func (s *Server) Close() error {
	select {
	case <-s.exited:
		return nil
	default:
	}
	if err := s.cmd.Process.Kill(); err != nil {
		return fmt.Errorf("memcache: kill memcached: %w", err)
	}
	<-s.exited
	return nil
}
