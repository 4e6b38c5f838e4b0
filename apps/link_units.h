// Link speeds and latencies with their units, as cohort-plan takes them: "100Gbit", "25Gbps",
// "12.5GB/s", "450GB/s"; "3us", "1.5ms". A bare number is refused: GB/s and Gbit/s differ by 8.
#pragma once

#include <string>

namespace cohort {

// Bytes per second of a bandwidth with a unit: a decimal prefix (k, K, M, G, T, or none) or a
// binary one (Ki, Mi, Gi, Ti) before bits (bit, bit/s, b/s, bps) or bytes (B, B/s, Bps).
// Throws a ConfigError naming `option` and the forms it takes for anything else, a bare number
// included, and for values that are not finite and positive.
double ParseBandwidth(const std::string& text, const std::string& option);

// Seconds of a latency with a unit (ns, us, µs, ms, s); finite and >= 0. Errors as above.
double ParseLatency(const std::string& text, const std::string& option);

}  // namespace cohort
