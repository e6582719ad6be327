//go:build !linux

package netns

import "fmt"

// New fails: network namespaces are Linux's.
func New() (*Pair, error) {
	return nil, fmt.Errorf("%w: network namespaces need Linux", ErrUnavailable)
}

// Close, Exec, Ifindex and Run fail on other systems.
func (p *Pair) Close() error                        { return ErrUnavailable }
func (p *Pair) Exec(int, ...string) ([]byte, error) { return nil, ErrUnavailable }
func (p *Pair) Ifindex(int) (int, error)            { return 0, ErrUnavailable }
func (p *Pair) Run(int, func() error) error         { return ErrUnavailable }
