#pragma once
/// The node's count of TCP retransmission timeouts (Linux: `TCPTimeouts` in /proc/net/netstat,
/// for the network namespace the process runs in): a timer that fired because a segment or its
/// acknowledgement was lost, as when an incast overflows a switch queue. Loss probes and fast
/// retransmits are not counted.
#include <string>
#include <string_view>

namespace commsched::core {

/// The `TCPTimeouts` value in the text of /proc/net/netstat (a "TcpExt:" line of names followed
/// by a "TcpExt:" line of values); -1 where the text has none.
long long parse_tcp_timeouts(std::string_view netstat);

/// The count now, from `path` (Linux: /proc/net/netstat); -1 where it cannot be read (not
/// Linux, no /proc, no such counter). Reads at most 64 KiB.
long long tcp_timeouts(const std::string& path);

}  // namespace commsched::core
