package rpc

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/examples/internal/source"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/nicrt"
)

//go:embed ledger.naam
var sourceText []byte

var prog = source.New("rpc", "ledger.naam", sourceText)

// Region names, in the object's order (ledger.naam's, which Register
// registers under the same names).
const (
	RegionAccounts = "accounts"
	RegionLedger   = "ledger"
	RegionNode     = "node"
)

// Layouts.
const (
	AccountSize    = 16
	AccountBalance = 0
	AccountOps     = 8

	LedgerSupply  = 0
	LedgerNext    = 8
	LedgerEntries = 16
	EntrySize     = 40

	Peers        = 8
	NodeInfoSize = 8 + 8*Peers

	// MaxSupply bounds the sum of a node's balances.
	MaxSupply = 1 << 62
)

// Fail codes.
const (
	CodeNoAccount    = 1
	CodeInsufficient = 2
	CodeContended    = 3
	CodeSameAccount  = 4
	CodeZeroAmount   = 5
	CodeOverSupply   = 6
	CodeSendFailed   = 7
	CodeNotYet       = 8
	CodeGone         = 9
	CodeNotPeer      = 10
	CodeBusy         = 11
)

// Errors, one per fail code.
var (
	ErrNoAccount    = errors.New("rpc: no such account")
	ErrInsufficient = errors.New("rpc: insufficient balance")
	ErrContended    = errors.New("rpc: too many concurrent changes, try again")
	ErrSameAccount  = errors.New("rpc: transfer to the same account")
	ErrZeroAmount   = errors.New("rpc: zero amount")
	ErrOverSupply   = errors.New("rpc: the node's supply would pass 2^62")
	ErrSendFailed   = errors.New("rpc: the credit could not be sent; the debit was undone")
	ErrNotYet       = errors.New("rpc: no such history entry yet")
	ErrGone         = errors.New("rpc: history entry overwritten")
	ErrNotPeer      = errors.New("rpc: sender is not a trusted peer")
	ErrBusy         = errors.New("rpc: entry being written, try again")
)

var codeErrs = call.Errors{
	CodeNoAccount: ErrNoAccount, CodeInsufficient: ErrInsufficient, CodeContended: ErrContended,
	CodeSameAccount: ErrSameAccount, CodeZeroAmount: ErrZeroAmount, CodeOverSupply: ErrOverSupply,
	CodeSendFailed: ErrSendFailed, CodeNotYet: ErrNotYet, CodeGone: ErrGone, CodeNotPeer: ErrNotPeer,
	CodeBusy: ErrBusy,
}

// Entry kinds of the history.
const (
	KindDeposit  = 1
	KindTransfer = 2
	KindOut      = 3 // debited here, credit sent to Node
	KindIn       = 4 // credited here, sent by Node
	KindRefund   = 5 // a refused credit came back (or the send failed)
	KindBounced  = 6 // a credit refused here; refund sent to Node
)

// Handler names, in object order (object ids 0…7).
var Handlers = []string{"balance", "deposit", "transfer", "entry", "transfer_out", "credit_in", "refund_in", "balance_at"}

// Config is the ledger's size: the constants of ledger.naam, whose
// declared values are the defaults.
type Config struct {
	Accounts uint32 // ACCOUNTS: default 1024
	History  uint32 // HISTORY: entries in the ring, a power of two; default 1024
}

// params ties c's fields to ledger.naam's constants.
func (c *Config) params() []source.Param {
	return []source.Param{{Const: "ACCOUNTS", Value: &c.Accounts}, {Const: "HISTORY", Value: &c.History}}
}

func (c Config) withDefaults() Config {
	prog.Defaults(c.params()...)
	return c
}

// Validate reports what is wrong with c.
func (c Config) Validate() error {
	c = c.withDefaults()
	if bits.OnesCount32(c.History) != 1 {
		return fmt.Errorf("rpc: history of %d entries is not a power of two", c.History)
	}
	if uint64(c.Accounts)*AccountSize > bytecode.MaxRegionSize || c.LedgerSize() > bytecode.MaxRegionSize {
		return fmt.Errorf("rpc: %d accounts or %d entries do not fit a region", c.Accounts, c.History)
	}
	return nil
}

// AccountsSize, LedgerSize: the regions' sizes (node is NodeInfoSize).
func (c Config) AccountsSize() uint64 { return uint64(c.withDefaults().Accounts) * AccountSize }
func (c Config) LedgerSize() uint64 {
	return LedgerEntries + uint64(c.withDefaults().History)*EntrySize
}

// Compile compiles ledger.naam with c's parameters (nicrt.NIC.Install
// verifies it).
func Compile(c Config) (*bytecode.Object, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return prog.Compile(c.params()...)
}

// Regions are a node's ledger regions.
type Regions struct {
	Accounts, Ledger, Node *nicrt.Region
}

// Register registers the three regions for tenant on nic, sized for c,
// and fills the node region (self and peers, at most Peers of them).
func Register(nic *nicrt.NIC, tenant uint64, c Config, self uint64, peers []uint64) (Regions, error) {
	var rs Regions
	if err := c.Validate(); err != nil {
		return rs, err
	}
	var err error
	if rs.Accounts, err = nic.Register(tenant, RegionAccounts, c.AccountsSize(), nicrt.RegionOptions{Writable: true}); err != nil {
		return rs, err
	}
	if rs.Ledger, err = nic.Register(tenant, RegionLedger, c.LedgerSize(), nicrt.RegionOptions{Writable: true}); err != nil {
		return rs, err
	}
	if rs.Node, err = nic.Register(tenant, RegionNode, NodeInfoSize, nicrt.RegionOptions{}); err != nil {
		return rs, err
	}
	return rs, SetNodeInfo(rs.Node.Bytes(), self, peers)
}

// SetNodeInfo writes the node region: this node's id and its peers.
func SetNodeInfo(mem []byte, self uint64, peers []uint64) error {
	if len(mem) < NodeInfoSize || len(peers) > Peers {
		return fmt.Errorf("rpc: node region of %d bytes with %d peers (at most %d)", len(mem), len(peers), Peers)
	}
	clear(mem[:NodeInfoSize])
	binary.LittleEndian.PutUint64(mem, self)
	for i, p := range peers {
		binary.LittleEndian.PutUint64(mem[8+8*i:], p)
	}
	return nil
}

// Entry is one history entry.
type Entry struct {
	Seq      uint64
	Kind     uint32
	From, To uint32
	Amount   uint64
	Node     uint64
}

// DecodeEntry decodes an entry from its EntrySize bytes (the entry
// handler's reply, or the ring in the ledger region).
func DecodeEntry(b []byte) (Entry, error) {
	if len(b) != EntrySize {
		return Entry{}, fmt.Errorf("rpc: entry of %d bytes, want %d", len(b), EntrySize)
	}
	e := Entry{
		Kind:   binary.LittleEndian.Uint32(b[8:]),
		From:   binary.LittleEndian.Uint32(b[12:]),
		To:     binary.LittleEndian.Uint32(b[16:]),
		Amount: binary.LittleEndian.Uint64(b[24:]),
		Node:   binary.LittleEndian.Uint64(b[32:]),
	}
	s := binary.LittleEndian.Uint64(b)
	if s == 0 {
		return e, ErrBusy
	}
	e.Seq = s - 1
	return e, nil
}

// AccountBalanceOf reads account acct's balance from the accounts region
// bytes (host side).
func AccountBalanceOf(accounts []byte, acct uint32) uint64 {
	return binary.LittleEndian.Uint64(accounts[uint64(acct)*AccountSize:])
}

// HandlerIDs maps handler names to an installed program's ids.
type HandlerIDs map[string]uint32

// IDs finds every handler of p.
func IDs(p *nicrt.Program) (HandlerIDs, error) {
	ids := HandlerIDs{}
	for _, h := range Handlers {
		id, ok := p.HandlerID(h)
		if !ok {
			return nil, fmt.Errorf("rpc: the program has no handler %q", h)
		}
		ids[h] = id
	}
	return ids, nil
}

// Client calls the ledger's handlers, one round trip each.
type Client struct {
	c   call.Caller
	ids HandlerIDs
}

// NewClient is a client of the handlers ids through c.
func NewClient(c call.Caller, ids HandlerIDs) *Client { return &Client{c: c, ids: ids} }

// do calls handler h with the little-endian fields of args (each a
// uint32 or uint64, laid out with natural alignment) and decodes a reply
// of two u64 words, or returns the raw reply when want is not 16.
func (c *Client) do(ctx context.Context, h string, want int, args ...any) ([]byte, error) {
	var req []byte
	for _, a := range args {
		switch v := a.(type) {
		case uint32:
			req = binary.LittleEndian.AppendUint32(req, v)
		case uint64:
			for len(req)%8 != 0 {
				req = append(req, 0)
			}
			req = binary.LittleEndian.AppendUint64(req, v)
		}
	}
	for len(req)%8 != 0 && len(req) > 4 {
		req = append(req, 0)
	}
	out, err := c.c.Call(ctx, c.ids[h], req)
	if err != nil {
		if code, ok := call.Code(err); ok {
			return nil, codeErrs.Of("rpc: "+h+" failed", code, err)
		}
		return nil, err
	}
	if len(out) != want {
		return nil, fmt.Errorf("rpc: %s reply of %d bytes, want %d", h, len(out), want)
	}
	return out, nil
}

func two(b []byte) (uint64, uint64) {
	return binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
}

// Balance is acct's balance and number of changes.
func (c *Client) Balance(ctx context.Context, acct uint32) (balance, ops uint64, err error) {
	out, err := c.do(ctx, "balance", 16, acct)
	if err != nil {
		return 0, 0, err
	}
	balance, ops = two(out)
	return balance, ops, nil
}

// Deposit adds amount to acct: the new balance and the history entry.
func (c *Client) Deposit(ctx context.Context, acct uint32, amount uint64) (balance, seq uint64, err error) {
	out, err := c.do(ctx, "deposit", 16, acct, amount)
	if err != nil {
		return 0, 0, err
	}
	balance, seq = two(out)
	return balance, seq, nil
}

// Transfer moves amount from one account to another of this node.
func (c *Client) Transfer(ctx context.Context, from, to uint32, amount uint64) (fromBalance, seq uint64, err error) {
	out, err := c.do(ctx, "transfer", 16, from, to, amount)
	if err != nil {
		return 0, 0, err
	}
	fromBalance, seq = two(out)
	return fromBalance, seq, nil
}

// Entry reads history entry seq.
func (c *Client) Entry(ctx context.Context, seq uint64) (Entry, error) {
	out, err := c.do(ctx, "entry", EntrySize, seq)
	if err != nil {
		return Entry{}, err
	}
	return DecodeEntry(out)
}

// TransferOut debits from here and sends the credit of to to node toNode.
func (c *Client) TransferOut(ctx context.Context, from, to uint32, amount, toNode uint64) (fromBalance, seq uint64, err error) {
	out, err := c.do(ctx, "transfer_out", 16, from, to, amount, toNode)
	if err != nil {
		return 0, 0, err
	}
	fromBalance, seq = two(out)
	return fromBalance, seq, nil
}

// BalanceAt reads acct of node at, forwarded there if it is not this one.
func (c *Client) BalanceAt(ctx context.Context, at uint64, acct uint32) (balance, ops uint64, err error) {
	out, err := c.do(ctx, "balance_at", 16, at, acct)
	if err != nil {
		return 0, 0, err
	}
	balance, ops = two(out)
	return balance, ops, nil
}

// PeerIDs finds the handler ids of the ledger a node installed, through
// the host library.
func PeerIDs(ctx context.Context, p *host.Peer) (HandlerIDs, error) {
	ids := HandlerIDs{}
	for _, name := range Handlers {
		h, err := p.Handler(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("rpc: %w", err)
		}
		ids[name] = h.ID
	}
	return ids, nil
}
