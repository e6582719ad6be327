package transporttest

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/naam-project/naam/nicrt/transport"
)

// EchoLoad is the batched load client of the benchmarks that set NAAM
// beside plain UDP: from a socket opened with cfg it sends count
// datagrams of size bytes (at least 4: a sequence number leads) to the
// echo server at to, window of them in flight (at most 64), writing the
// next ones as the echoes come back, and gives record each echo's round
// trip.
func EchoLoad(to transport.Addr, cfg transport.UDPConfig, window, size, count int, record func(time.Duration)) error {
	if window < 1 || window > 64 || size < 4 {
		return fmt.Errorf("transporttest: echo load: window %d not in 1…64 or size %d under 4", window, size)
	}
	cl, err := transport.ListenUDP(cfg)
	if err != nil {
		return err
	}
	defer cl.Close()
	cl.SetReadDeadline(time.Now().Add(time.Minute))
	var sentAt [64]time.Time
	reqs := MakePackets(window, size)
	reps := MakePackets(window, 2048)
	seq := 0
	fill := func(k int) []transport.Packet {
		now := time.Now()
		for i := range k {
			binary.LittleEndian.PutUint32(reqs[i].Buf, uint32(seq))
			reqs[i].Addr, reqs[i].N = to, size
			sentAt[seq%64] = now
			seq++
		}
		return reqs[:k]
	}
	if _, err := cl.WriteBatch(fill(min(window, count))); err != nil {
		return err
	}
	for done := 0; done < count; {
		n, err := cl.ReadBatch(reps)
		if err != nil {
			return err
		}
		now := time.Now()
		for _, p := range reps[:n] {
			record(now.Sub(sentAt[binary.LittleEndian.Uint32(p.Buf)%64]))
		}
		done += n
		if k := min(n, count-seq); k > 0 {
			if _, err := cl.WriteBatch(fill(k)); err != nil {
				return err
			}
		}
	}
	return nil
}
