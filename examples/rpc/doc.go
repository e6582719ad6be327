// Package rpc is the RPC example: a small ledger (balances,
// deposits, transfers with compare-and-swap, a history ring) whose
// operations are handlers in the handler language (ledger.naam,
// embedded), including a two-node transfer: transfer_out debits here and
// sends the credit to credit_in on another node with send; a credit that
// node refuses comes back to refund_in. balance_at shows forward: a read
// for an account of another node is forwarded there, and that node
// answers the caller.
//
// Regions (the host registers all three; README.md has the layouts):
//
//	accounts: [Account; Accounts] rw   Account = balance u64, ops u64 (16 bytes)
//	ledger:   Ledger rw                supply u64, next u64, entries [Entry; History]
//	node:     NodeInfo ro              self u64, peers [u64; 8]
//
// The handlers that receive sends (credit_in, refund_in) accept them only
// from the peers listed in the node region, so a client cannot mint money
// by calling them; the supply of a node (the sum of its balances) is kept
// at most 2^62, so no balance overflows.
//
// What it owns: the program and its parameters, the layouts, the codecs,
// a Client over call.Caller, and host-side access (SetNodeInfo, Accounts).
// Sends and forwards leave through the node's nicrt.Outbox: the network
// side's job, not this package's.
package rpc
