# call 5 (the conformance suite's unwind in the VM) is not a helper for the verifier.
# mem-size: 64
# want: reject unknown-helper
# insn: 1
mov %r0, 0
call 5  # raw mode has no helpers at all
exit
