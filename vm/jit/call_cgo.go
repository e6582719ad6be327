//go:build cgo

package jit

// The run function is called through wasmtime's C API directly:
// wasmtime-go's Func.Call asks for the function's type and converts every
// value on each call, several cgo crossings that cost more than running a
// short handler. The declarations mirror wasmtime's headers (v39:
// wasmtime/func.h, wasmtime/val.h, wasm.h); the library itself is the one
// wasmtime-go links.

/*
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdlib.h>

typedef struct { uint64_t store_id; void *priv; } naam_wasmtime_func_t;
typedef union { int64_t i64; uint8_t v128[16]; } naam_wasmtime_val_raw_t;
typedef struct { size_t size; char *data; } naam_wasm_byte_vec_t;

extern void *wasmtime_func_call_unchecked(void *store, const naam_wasmtime_func_t *func,
	naam_wasmtime_val_raw_t *args_and_results, size_t len, void **trap);
extern void wasmtime_error_delete(void *err);
extern void wasmtime_error_message(const void *err, naam_wasm_byte_vec_t *message);
extern void wasm_trap_delete(void *trap);
extern void wasm_trap_message(const void *trap, naam_wasm_byte_vec_t *message);
extern void wasm_byte_vec_delete(naam_wasm_byte_vec_t *vec);
extern void wasmtime_config_memory_reservation_set(void *config, uint64_t size);
extern void wasmtime_config_memory_may_move_set(void *config, _Bool may_move);

// naam_out is where naam_call reports a failed call.
typedef struct { int failed; char msg[256]; } naam_out;

// naam_call runs a () -> i64 function. On a trap or an error it returns 0,
// sets out->failed and copies the message (truncated) into out->msg. Its
// arguments are integers, so that cgo has no Go pointers to check.
static int64_t naam_call(uintptr_t store, uint64_t store_id, uintptr_t priv, uintptr_t outp) {
	naam_out *out = (naam_out *)outp;
	naam_wasmtime_func_t f = { store_id, (void *)priv };
	naam_wasmtime_val_raw_t v;
	v.i64 = 0;
	void *trap = NULL;
	void *err = wasmtime_func_call_unchecked((void *)store, &f, &v, 1, &trap);
	if (err == NULL && trap == NULL) {
		out->failed = 0;
		return v.i64;
	}
	out->failed = 1;
	naam_wasm_byte_vec_t m = { 0, NULL };
	if (trap != NULL) {
		wasm_trap_message(trap, &m);
		wasm_trap_delete(trap);
	} else {
		wasmtime_error_message(err, &m);
		wasmtime_error_delete(err);
	}
	size_t n = m.size < sizeof out->msg - 1 ? m.size : sizeof out->msg - 1;
	if (m.data != NULL) memcpy(out->msg, m.data, n);
	out->msg[n] = 0;
	wasm_byte_vec_delete(&m);
	return 0;
}

static naam_out *naam_new_out(void) { return calloc(1, sizeof(naam_out)); }
*/
import "C"

import (
	"errors"
	"runtime"
	"unsafe"

	"github.com/bytecodealliance/wasmtime-go/v39"
)

// funcLayout is wasmtime-go's Func: one wasmtime_func_t.
type funcLayout struct {
	storeID uint64
	priv    unsafe.Pointer
}

// A different layout of wasmtime.Func does not compile.
var _ = [1]struct{}{}[unsafe.Sizeof(wasmtime.Func{})-unsafe.Sizeof(funcLayout{})]

// configLayout is wasmtime-go's Config: one wasm_config_t pointer.
type configLayout struct{ ptr unsafe.Pointer }

// A different layout of wasmtime.Config does not compile.
var _ = [1]struct{}{}[unsafe.Sizeof(wasmtime.Config{})-unsafe.Sizeof(configLayout{})]

// pinMemory makes every linear memory of engines made with cfg a 4 GiB
// reservation that never moves: a 32-bit memory grows inside it, so the
// base an instance keeps and the files it maps in place stay where they
// are. (These settings have no wasmtime-go method; the C API has them.)
func pinMemory(cfg *wasmtime.Config) {
	p := (*configLayout)(unsafe.Pointer(cfg)).ptr
	C.wasmtime_config_memory_reservation_set(p, 1<<32)
	C.wasmtime_config_memory_may_move_set(p, false)
	runtime.KeepAlive(cfg)
}

// storeContext returns the store's context, which lives as long as the
// store does (wasmtime_store_context), so that a run need not ask again.
func storeContext(store *wasmtime.Store) unsafe.Pointer { return unsafe.Pointer(store.Context()) }

// callOut is where the C side reports a failed call: C memory, made once
// per instance, so that a call neither allocates nor passes a Go pointer.
type callOut struct{ p *C.naam_out }

func newCallOut() callOut { return callOut{C.naam_new_out()} }

func (o callOut) free() { C.free(unsafe.Pointer(o.p)) }

// callRun calls fn, of type () -> i64, in store, whose context is ctx.
func callRun(store *wasmtime.Store, ctx unsafe.Pointer, fn *wasmtime.Func, out callOut) (int64, error) {
	f := (*funcLayout)(unsafe.Pointer(fn))
	r := C.naam_call(C.uintptr_t(uintptr(ctx)), C.uint64_t(f.storeID), C.uintptr_t(uintptr(f.priv)), C.uintptr_t(uintptr(unsafe.Pointer(out.p))))
	runtime.KeepAlive(store)
	runtime.KeepAlive(fn)
	if out.p.failed != 0 {
		return 0, errors.New(C.GoString(&out.p.msg[0]))
	}
	return int64(r), nil
}
