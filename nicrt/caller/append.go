package caller

import "context"

// AppendCall is Call that appends the reply to dst instead of allocating
// it: with a dst of enough capacity, a call allocates nothing of its own.
func (c *Client) AppendCall(ctx context.Context, dst []byte, tenant, handler uint32, payload []byte) ([]byte, error) {
	cl := c.calls.Get().(*call)
	return c.do(ctx, cl, tenant, handler, payload, dst)
}
