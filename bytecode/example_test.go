package bytecode_test

import (
	"fmt"
	"os"

	"github.com/naam-project/naam/bytecode"
)

func ExampleAssemble() {
	insns, err := bytecode.Assemble(`
# r0 = 1 + 2, or -1 if that is not 3
mov %r0, 1
add %r0, 2
jeq %r0, 3, done
mov %r0, -1
done:
exit
`)
	if err != nil {
		fmt.Printf("%+v\n", err)
		return
	}
	raw, err := bytecode.Encode(insns)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("% x\n", raw[:8])
	text, err := bytecode.Disassemble(insns)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(text)
	// Output:
	// b7 00 00 00 01 00 00 00
	// mov %r0, 1
	// add %r0, 2
	// jeq %r0, 3, +1
	// mov %r0, -1
	// exit
}

func ExampleAssemble_errors() {
	_, err := bytecode.Assemble("mov %r0, 0\nadd r0, 1\njne %r0, 0, fail\nexit\n")
	fmt.Println(err)
	fmt.Printf("%+v\n", err)
	// Output:
	// 2:5: expected register like %r1, found "r0" (and 1 more error)
	// 2:5: expected register like %r1, found "r0"
	// 3:13: undefined label "fail"
}

func ExampleDisassembleTo() {
	insns, err := bytecode.Assemble("mov %r0, 0\nadd %r0, 1\njlt %r0, 10, -2\nexit\n")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := bytecode.DisassembleTo(os.Stdout, insns, bytecode.DisassembleOptions{Labels: true}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// mov %r0, 0
	// L1:
	// add %r0, 1
	// jlt %r0, 10, L1
	// exit
}
