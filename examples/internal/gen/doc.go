// Package gen renders the examples' handler templates and compiles the
// result, with the compiler's positioned errors in the message.
package gen
