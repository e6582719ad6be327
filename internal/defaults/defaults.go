// Package defaults fills the zero fields of configuration structs, the one
// helper the runtime's Config, ServerConfig and ClientConfig share: a
// field left zero takes the default its comment names. It imports nothing
// of NAAM's.
package defaults

// Set sets *p to v if *p is the zero value.
func Set[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}
