// Package conformance reads the bpf_conformance suite's test files (the
// `.data` format: `-- asm`, `-- mem`, `-- result`, `-- error`, `-- raw`
// sections) and finds the suite on disk. It is shared by the tests of the
// VM, the naamc CLI and later execution tiers; it runs nothing itself.
package conformance
