// Package steer chooses where a message runs: at its caller, on a NIC
// core or on a host core. It holds only the decision — per-option cost
// estimates in, one location out, with hysteresis so that a choice does
// not flap between two options of nearly equal cost, and a small share
// of probes so that the estimate of an option not chosen stays fresh.
//
// It knows nothing of the model, the network or time sources: callers
// pass their signals (smoothed with EWMA) and a clock reading, so the
// same code runs in the node, in the caller library and in the
// simulator, deterministically for the same inputs. spec/nic.md,
// Steering, is the contract: the signals each side measures and how it
// turns them into costs.
package steer
