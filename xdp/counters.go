package xdp

// counter is an index into the per-CPU counters (spec/xdp.md, Counters).
type counter int

// Counters. Numbers are internal; names are stable.
const (
	ctrRx counter = iota
	ctrPassNotNAAM
	ctrPassIPv6
	ctrPassIP
	ctrPassMalformed
	ctrPassTenant
	ctrPassType
	ctrPassRoute
	ctrPassHandler
	ctrPassRegion
	ctrPassPeers
	ctrPassElsewhere
	ctrPassID
	ctrDropBadMAC
	ctrDropWrongDst
	ctrDropDuplicateRunning
	ctrDropReplayTooOld
	ctrDropReplayFloor
	ctrDropContended
	ctrDropTx
	ctrRuns
	ctrReplies
	ctrErrorReplies
	ctrFaults
	ctrCacheHits
	ctrRetransmitted
	ctrUnknownHandler
	ctrPassTailroom
	numCounters
	maxCounters = 40 // room reserved in the scratch
)

// counterNames are the names Tier.Counters reports, without the "xdp."
// prefix. Every packet the program sees is counted once among pass.*,
// drop.*, replies, error_replies and cache_hits; rx counts them all.
var counterNames = [numCounters]string{
	ctrRx:                   "rx",
	ctrPassNotNAAM:          "pass.not_naam",
	ctrPassIPv6:             "pass.ipv6",
	ctrPassIP:               "pass.ip",
	ctrPassMalformed:        "pass.malformed",
	ctrPassTenant:           "pass.tenant",
	ctrPassType:             "pass.type",
	ctrPassRoute:            "pass.route",
	ctrPassHandler:          "pass.handler",
	ctrPassRegion:           "pass.region",
	ctrPassPeers:            "pass.peers_full",
	ctrPassElsewhere:        "pass.cached_elsewhere",
	ctrPassID:               "pass.id",
	ctrDropBadMAC:           "drop.bad_mac",
	ctrDropWrongDst:         "drop.wrong_dst",
	ctrDropDuplicateRunning: "drop.duplicate_running",
	ctrDropReplayTooOld:     "drop.replay_too_old",
	ctrDropReplayFloor:      "drop.replay_evicted",
	ctrDropContended:        "drop.contended",
	ctrDropTx:               "drop.tx_failed",
	ctrRuns:                 "runs",
	ctrReplies:              "replies",
	ctrErrorReplies:         "error_replies",
	ctrFaults:               "faults",
	ctrCacheHits:            "cache_hits",
	ctrRetransmitted:        "retransmitted",
	ctrUnknownHandler:       "unknown_handler",
	ctrPassTailroom:         "pass.tailroom",
}

var _ [maxCounters - numCounters]struct{} // the scratch has room for every counter
