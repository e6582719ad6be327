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

// naam_call_t is one instance's call of run: set up once (store context
// and function), then reused by every run, which reads the result, or
// the failure and its message (truncated), from it.
typedef struct {
	void *store;
	naam_wasmtime_func_t func;
	naam_wasmtime_val_raw_t result;
	int failed;
	char msg[256];
} naam_call_t;

// naam_call runs the () -> i64 function of call. It returns nothing and
// takes an integer, so that cgo neither checks a Go pointer nor has its
// wrapper find the stack top to store a result.
static void naam_call(uintptr_t callp) {
	naam_call_t *call = (naam_call_t *)callp;
	call->result.i64 = 0;
	void *trap = NULL;
	void *err = wasmtime_func_call_unchecked(call->store, &call->func, &call->result, 1, &trap);
	if (err == NULL && trap == NULL) {
		call->failed = 0;
		return;
	}
	call->failed = 1;
	naam_wasm_byte_vec_t m = { 0, NULL };
	if (trap != NULL) {
		wasm_trap_message(trap, &m);
		wasm_trap_delete(trap);
	} else {
		wasmtime_error_message(err, &m);
		wasmtime_error_delete(err);
	}
	size_t n = m.size < sizeof call->msg - 1 ? m.size : sizeof call->msg - 1;
	if (m.data != NULL) memcpy(call->msg, m.data, n);
	call->msg[n] = 0;
	wasm_byte_vec_delete(&m);
}

static naam_call_t *naam_new_call(uintptr_t store, uint64_t store_id, uintptr_t priv) {
	naam_call_t *call = calloc(1, sizeof(naam_call_t));
	if (call == NULL) return NULL;
	call->store = (void *)store;
	call->func.store_id = store_id;
	call->func.priv = (void *)priv;
	return call;
}
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

// runCall is an instance's call of its run function: C memory made once
// per instance, so that a run neither allocates nor passes a Go pointer.
// It holds the store's context (which lives as long as the store,
// wasmtime_store_context) and the function; store and fn keep them alive.
type runCall struct {
	p     *C.naam_call_t
	store *wasmtime.Store
	fn    *wasmtime.Func
}

// newRunCall prepares calls of fn, of type () -> i64, in store.
func newRunCall(store *wasmtime.Store, fn *wasmtime.Func) (runCall, error) {
	f := (*funcLayout)(unsafe.Pointer(fn))
	p := C.naam_new_call(C.uintptr_t(uintptr(unsafe.Pointer(store.Context()))), C.uint64_t(f.storeID), C.uintptr_t(uintptr(f.priv)))
	if p == nil {
		return runCall{}, errors.New("jit: out of memory for a call record")
	}
	return runCall{p: p, store: store, fn: fn}, nil
}

func (rc runCall) free() { C.free(unsafe.Pointer(rc.p)) }

// call runs the function: one cgo call.
func (rc runCall) call() (int64, error) {
	C.naam_call(C.uintptr_t(uintptr(unsafe.Pointer(rc.p))))
	if rc.p.failed != 0 {
		return 0, errors.New(C.GoString(&rc.p.msg[0]))
	}
	return int64(*(*C.int64_t)(unsafe.Pointer(&rc.p.result))), nil
}
