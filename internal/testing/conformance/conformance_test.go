package conformance

import (
	"bytes"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    Test
		wantErr string
	}{
		{
			name: "all sections",
			text: "# comment\n-- asm\nmov %r0, 1\nexit\n-- mem\n00 01\nff\n-- raw\n0x00000001000000b7\n-- result\n0x1\n",
			want: Test{Asm: "mov %r0, 1\nexit\n", Mem: []byte{0, 1, 0xff}, Result: 1, HasResult: true,
				Raw: []byte{0xb7, 0, 0, 0, 1, 0, 0, 0}, AsmLine: 3},
		},
		{
			name: "error section, unknown sections skipped",
			text: "-- asm\nexit\n-- c\nint main() {}\n-- no register offset\ncall instruction\n-- error\nboom\n",
			want: Test{Asm: "exit\n", Error: "boom", AsmLine: 2},
		},
		{name: "no asm", text: "-- result\n0x1\n", wantErr: "no -- asm section"},
		{name: "no result", text: "-- asm\nexit\n", wantErr: "neither -- result nor -- error"},
		{name: "bad mem", text: "-- asm\nexit\n-- mem\nzz\n-- result\n0\n", wantErr: "line 4: bad -- mem byte"},
		{name: "bad result", text: "-- asm\nexit\n-- result\nxyz\n", wantErr: `line 4: bad -- result "xyz"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.text)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Asm != tc.want.Asm || !bytes.Equal(got.Mem, tc.want.Mem) || got.Result != tc.want.Result ||
				got.HasResult != tc.want.HasResult || got.Error != tc.want.Error || !bytes.Equal(got.Raw, tc.want.Raw) ||
				got.AsmLine != tc.want.AsmLine {
				t.Fatalf("have %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// FuzzParse: the .data reader never panics.
func FuzzParse(f *testing.F) {
	f.Add("-- asm\nmov %r0, 1\nexit\n-- mem\n00 01\n-- result\n0x1\n")
	f.Add("-- asm\nexit\n-- raw\n0x95\n-- error\nx\n")
	f.Fuzz(func(t *testing.T, text string) {
		Parse(text)
	})
}
