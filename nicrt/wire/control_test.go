package wire

import (
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// controlSamples are valid bodies of every type.
func controlSamples() []Control {
	return []Control{
		&Install{Upload: 1, Total: 3, Offset: 0, Data: []byte{1, 2, 3}},
		&Install{Upload: 1 << 40, Total: MaxInstallSize, Offset: MaxInstallSize - 1, Data: []byte{9}},
		&InstallReply{Received: 1000},
		&InstallReply{Received: 3, Program: 12, Handlers: []InstalledHandler{{"get", 1}, {"put", 2}}},
		&Uninstall{Program: 12},
		&Unregister{Region: 3},
		&Unregister{Region: 1<<32 - 1},
		&Register{Name: "table", Size: 4096, Writable: true, Placement: PlacementNICMem},
		&Register{Name: "log", Size: MaxRegionSize, Placement: PlacementHost},
		&RegisterReply{Region: 3, Key: 0xdeadbeefcafef00d},
		&StatsRequest{},
		&StatsRequest{Prefix: "nic."},
		&StatsRequest{Prefix: "nic.", After: "nic.drops.mac"},
		&StatsReply{},
		&StatsReply{Counters: []Counter{{"nic.drops.mac", 2}, {"nic.rx", 1 << 33}}},
		&StatsReply{Counters: []Counter{{"nic.rx", 1}}, More: true},
		&DescribeRequest{},
		&DescribeRequest{Cursor: 3},
		&DescribeReply{Node: 7},
		&DescribeReply{Node: 7, Next: 2, Programs: []ProgramDesc{{Program: 3, Source: "kv.naam", Handlers: []HandlerDesc{
			{Name: "get", ID: 16, Args: []Field{{"key", "u64", 0, 8}}, Results: []Field{{"len", "u32", 0, 4}, {"value", "[u8; 64]", 4, 64}}},
			{Name: "nop", ID: 17},
			{Name: "peek", ID: 18, Client: true, MaxInsns: 412},
		}, Digest: 0x1234_5678_9abc_def0}}, Regions: []RegionDesc{{Name: "table", Region: 1, Key: 1 << 60, Size: 4096, Writable: true, Placement: PlacementNICMem}}},
	}
}

func newLike(m Control) Control {
	return reflect.New(reflect.TypeOf(m).Elem()).Interface().(Control)
}

func TestControlRoundTrip(t *testing.T) {
	for _, m := range controlSamples() {
		b, err := AppendControl(nil, m)
		if err != nil {
			t.Fatalf("%#v: %v", m, err)
		}
		back := newLike(m)
		if err := UnmarshalControl(b, back); err != nil {
			t.Fatalf("%#v: %v", m, err)
		}
		if !reflect.DeepEqual(back, m) {
			t.Errorf("round trip: %#v, want %#v", back, m)
		}
		prefixed, err := AppendControl([]byte("x"), m)
		if err != nil || string(prefixed) != "x"+string(b) {
			t.Errorf("AppendControl after a prefix: %q, %v", prefixed, err)
		}
		switch m.(type) {
		case *Install, *Uninstall, *Register, *StatsRequest, *DescribeRequest, *Unregister:
			parsed, err := ParseControl(m.Op(), b)
			if err != nil || !reflect.DeepEqual(parsed, m) {
				t.Errorf("ParseControl(%v): %#v, %v", m.Op(), parsed, err)
			}
		}
	}
}

// TestControlBytes pins the encoding of spec/wire.md's example.
func TestControlBytes(t *testing.T) {
	b, err := AppendControl(nil, &Register{Name: "table", Size: 4096, Writable: true, Placement: PlacementNICMem})
	if err != nil {
		t.Fatal(err)
	}
	const want = "84a46e616d65a57461626c65a473697a65cd1000a87772697461626c65c3a9706c6163656d656e74a66e69636d656d"
	if hex.EncodeToString(b) != want {
		t.Errorf("Register encodes as\n%x\nwant\n%s", b, want)
	}
	b, _ = AppendControl(nil, &StatsReply{})
	if hex.EncodeToString(b) != "81a8636f756e7465727390" {
		t.Errorf("empty StatsReply encodes as %x", b)
	}
}

// TestControlOtherForms: other encodings of the same body are read, and
// written back canonically.
func TestControlOtherForms(t *testing.T) {
	want := &Register{Name: "t", Size: 1, Placement: PlacementHost}
	canonical, _ := AppendControl(nil, want)
	for _, v := range []any{
		map[string]any{"placement": "host", "size": uint64(1), "name": "t", "writable": false},                     // other key order
		[]any{"t", uint64(1), false, "host"},                                                                       // array form
		map[string]any{"name": "t", "size": int64(1), "placement": "host"},                                         // missing key: zero
		map[string]any{"name": "t", "size": msgpack.RawMessage{0xcf, 0, 0, 0, 0, 0, 0, 0, 1}, "placement": "host"}, // uint64 form
	} {
		b, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m Register
		if err := UnmarshalControl(b, &m); err != nil {
			t.Errorf("%x: %v", b, err)
			continue
		}
		if !reflect.DeepEqual(&m, want) {
			t.Errorf("%x: %#v", b, m)
		}
		if again, _ := AppendControl(nil, &m); string(again) != string(canonical) {
			t.Errorf("%x written back as %x, want %x", b, again, canonical)
		}
	}
}

func TestControlErrors(t *testing.T) {
	enc := func(v any) []byte {
		b, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name  string
		op    Op
		b     []byte
		field string
		msg   string
	}{
		{"unknown op", 9, enc(map[string]any{}), "op", "9 is not a control op"},
		{"empty", OpStats, nil, "stats", "malformed msgpack: unexpected end of data"},
		{"not msgpack", OpStats, []byte{0xc1}, "stats", "0xc1 is not a msgpack type"},
		{"trailing data", OpStats, append(enc(map[string]any{}), 0), "stats", "1 bytes of trailing data"},
		{"huge map", OpStats, []byte{0xdf, 0xff, 0xff, 0xff, 0xff}, "stats", "elements claimed"},
		{"huge string", OpRegister, []byte{0x81, 0xa4, 'n', 'a', 'm', 'e', 0xdb, 0xff, 0xff, 0xff, 0xff}, "register", "runs past the end"},
		{"too deep", OpStats, []byte{0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x90}, "stats", "nested deeper"},
		{"unknown key", OpStats, enc(map[string]any{"prefix": "", "extra": 1}), "stats", "unknown field"},
		{"wrong type", OpUninstall, enc(map[string]any{"program": "x"}), "uninstall", "malformed msgpack"},
		{"install total 0", OpInstall, enc(map[string]any{"total": 0, "data": []byte{1}}), "install.total", "0 is outside 1…16777216"},
		{"install too big", OpInstall, enc(map[string]any{"total": MaxInstallSize + 1, "data": []byte{1}}), "install.total", "outside"},
		{"install no data", OpInstall, enc(map[string]any{"total": 5}), "install.data", "empty"},
		{"install past the end", OpInstall, enc(map[string]any{"total": 5, "offset": 3, "data": []byte{1, 2, 3}}), "install.offset", "bytes 3…6 do not fit a file of 5"},
		{"install offset wraps", OpInstall, enc(map[string]any{"total": 5, "offset": uint64(1<<64 - 1), "data": []byte{1}}), "install.offset", "do not fit"},
		{"uninstall 0", OpUninstall, enc(map[string]any{}), "uninstall.program", "0 names no program"},
		{"unregister 0", OpUnregister, enc(map[string]any{}), "unregister.region", "0 names no region"},
		{"unregister over 32 bits", OpUnregister, enc(map[string]any{"region": uint64(1<<32 + 5)}), "unregister.region", "4294967301 is over 2^32-1"},
		{"register no name", OpRegister, enc(map[string]any{"size": 1, "placement": "host"}), "register.name", "empty"},
		{"register size 0", OpRegister, enc(map[string]any{"name": "t", "placement": "host"}), "register.size", "0 is outside 1…4294967295"},
		{"register size 2^32", OpRegister, enc(map[string]any{"name": "t", "size": uint64(1 << 32), "placement": "host"}), "register.size", "outside"},
		{"register placement", OpRegister, enc(map[string]any{"name": "t", "size": 1, "placement": "gpu"}), "register.placement", `"gpu" is not "host" or "nicmem"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseControl(tc.op, tc.b)
			checkError(t, err, tc.field, ErrControl)
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not contain %q", err, tc.msg)
			}
		})
	}
}

func TestControlReplyErrors(t *testing.T) {
	for _, tc := range []struct {
		m     Control
		field string
	}{
		{&InstallReply{Received: MaxInstallSize + 1}, "install.received"},
		{&InstallReply{Handlers: []InstalledHandler{{"get", 1}}}, "install.handlers"},
		{&InstallReply{Program: 1, Handlers: []InstalledHandler{{"", 1}}}, "install.handlers[0].name"},
		{&InstallReply{Program: 1, Handlers: []InstalledHandler{{"a", 1}, {"a", 2}}}, "install.handlers[1].name"},
		{&InstallReply{Program: 1, Handlers: []InstalledHandler{{"a", 1}, {"b", 1}}}, "install.handlers[1].id"},
		{&StatsReply{Counters: []Counter{{"", 1}}}, "stats.counters[0].name"},
		{&StatsReply{Counters: []Counter{{"b", 1}, {"a", 1}}}, "stats.counters[1].name"},
		{&StatsReply{Counters: []Counter{{"a", 1}, {"a", 2}}}, "stats.counters[1].name"},
		{&StatsReply{More: true}, "stats.more"},
		{&DescribeReply{Programs: []ProgramDesc{{Program: 1, Handlers: []HandlerDesc{{Name: "get", Client: true}}}}}, "describe.programs[0].handlers[0].max_insns"},
	} {
		out, err := AppendControl([]byte("keep"), tc.m)
		checkError(t, err, tc.field, ErrControl)
		if string(out) != "keep" {
			t.Errorf("dst changed to %q", out)
		}
	}
}

// TestUnmarshalControlClears: a reused body keeps nothing of its last
// contents.
func TestUnmarshalControlClears(t *testing.T) {
	m := &Register{Name: "old", Size: 9, Writable: true, Placement: PlacementNICMem}
	b, _ := msgpack.Marshal(map[string]any{"name": "new", "size": 1, "placement": "host"})
	if err := UnmarshalControl(b, m); err != nil {
		t.Fatal(err)
	}
	if want := (&Register{Name: "new", Size: 1, Placement: PlacementHost}); !reflect.DeepEqual(m, want) {
		t.Fatalf("%#v, want %#v", m, want)
	}
	var e *Error
	if err := UnmarshalControl([]byte{0xc1}, m); !errors.As(err, &e) {
		t.Fatal(err)
	}
}

// TestUnmarshalControlNarrowInts: an integer too wide for its field is
// refused, naming the field, in requests and replies alike, instead of
// being cut by the decoder.
func TestUnmarshalControlNarrowInts(t *testing.T) {
	for _, tc := range []struct {
		m    Control
		body map[string]any
		want string
	}{
		{&RegisterReply{}, map[string]any{"region": uint64(1<<32 + 5), "key": 1}, "register.region: 4294967301 does not fit uint32"},
		{&InstallReply{}, map[string]any{"received": 1, "program": 1, "handlers": []any{map[string]any{"name": "a", "id": uint64(1 << 33)}}}, "install.handlers[0].id: 8589934592 does not fit uint32"},
		{&Register{}, map[string]any{"name": "r", "size": int64(-1), "placement": "host"}, "register.size: -1 does not fit uint64"},
		{&DescribeReply{}, map[string]any{"node": int64(-2)}, "describe.node: -2 does not fit uint32"},
	} {
		b, err := msgpack.Marshal(tc.body)
		if err != nil {
			t.Fatal(err)
		}
		err = UnmarshalControl(b, tc.m)
		if !errors.Is(err, ErrControl) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%T: %v, want an error containing %q", tc.m, err, tc.want)
		}
	}
}
