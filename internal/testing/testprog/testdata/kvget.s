# KV GET of lang/testdata/ok/kv_get.naam, written by hand: the yardstick
# for the compiler's output. Handler ABI (spec/abi.md): r1 = context.
#
# request: key [u8; 16] @0
# reply:   vlen u32 @0, value [u8; 64] @4; 68 bytes
# region[0] "table": [Bucket; 1024], read-only, 96-byte buckets:
#          key @0 (16), used @16 (1), vlen @20 (4), version @24, value @32 (64)
#
# Registers across the hash call: r6, r7 = the key as two u64, r8 = reply+68.
# In the loop: r0 = h, r9 = probe, r5 = &table[0].value, r2 = &b.value.
# Bucket fields are addressed from &b.value, so the value needs no add:
# key at -32, used at -16, vlen at -12.

    ldxdw %r2, [%r1+8]          # data_end
    ldxdw %r3, [%r1+24]         # reply_end
    ldxdw %r8, [%r1+16]         # reply
    ldxdw %r1, [%r1]            # data, hash's first argument
    mov %r0, -0x7fffff02        # FailShortRequest
    mov %r4, %r1
    add %r4, 16
    jgt %r4, %r2, out           # the key's 16 bytes are in the request
    mov %r0, -0x7fffff03        # FailShortReply
    add %r8, 68
    jgt %r8, %r3, out           # the 68 reply bytes are in the buffer
    ldxdw %r6, [%r1]
    ldxdw %r7, [%r1+8]
    mov %r2, 16
    call 1                      # r0 = hash(key, 16)
    lddw %r5, region[0]+32
    mov %r9, 0
loop:
    mov %r2, %r0
    and %r2, 1023               # (h + probe) % 1024
    mul %r2, 96
    add %r2, %r5                # r2 = &b.value
    ldxb %r3, [%r2-16]
    jeq %r3, 0, miss            # !b.used: not found
    ldxdw %r3, [%r2-32]
    jne %r3, %r6, next
    ldxdw %r3, [%r2-24]
    jne %r3, %r7, next
    ldxw %r4, [%r2-12]
    stxw [%r8-68], %r4          # vlen = b.vlen
    mov %r1, %r8
    add %r1, -64
    mov %r3, 64
    call 2                      # copy(value, b.value, 64)
    mov %r0, 68
    exit
next:
    add %r0, 1
    add %r9, 1
    jlt %r9, 8, loop
miss:
    mov %r0, -1                 # fail(NOT_FOUND)
out:
    exit
