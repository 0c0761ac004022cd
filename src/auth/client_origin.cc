#include "auth/client_origin.h"

#include <optional>
#include <string>

#include "common/strings.h"

namespace inferd {
namespace {

namespace ip = boost::asio::ip;

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// An IPv4-mapped IPv6 address (a dual-stack listener's view of an IPv4 peer) as IPv4, so
// that ::ffff:127.0.0.1 is loopback and matches a trusted 127.0.0.1.
ip::address Normalized(const ip::address& address) {
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return ip::make_address_v4(ip::v4_mapped, address.to_v6());
  }
  return address;
}

std::optional<ip::address> ParseAddress(std::string_view text) {
  boost::system::error_code ec;
  const ip::address address = ip::make_address(std::string(Trim(text)), ec);
  if (ec) return std::nullopt;
  return Normalized(address);
}

}  // namespace

absl::StatusOr<TrustedProxies> TrustedProxies::Parse(std::string_view list) {
  TrustedProxies proxies;
  for (std::string_view entry : SplitSkipEmpty(list, ',')) {
    if (Trim(entry).empty()) continue;
    std::optional<ip::address> address = ParseAddress(entry);
    if (!address) {
      return absl::InvalidArgumentError(
          StrCat("--trusted-proxies: '", Trim(entry),
                 "' is not an IP address (list the proxies' addresses, comma-separated)"));
    }
    if (proxies.addresses_.size() == kMaxTrustedProxies) {
      return absl::InvalidArgumentError(
          StrCat("--trusted-proxies lists more than ", kMaxTrustedProxies, " addresses"));
    }
    proxies.addresses_.push_back(*address);
  }
  return proxies;
}

bool TrustedProxies::Contains(const ip::address& address) const {
  const ip::address normalized = Normalized(address);
  for (const ip::address& proxy : addresses_) {
    if (proxy == normalized) return true;
  }
  return false;
}

bool IsLocalClient(std::string_view peer, const ForwardingHeaders& headers,
                   const TrustedProxies& trusted) {
  const std::optional<ip::address> peer_address = ParseAddress(peer);
  if (!peer_address) return false;
  if (!trusted.Contains(*peer_address)) {
    // A relay we do not trust: whoever it relays is unknown, so not local.
    return !headers.any() && peer_address->is_loopback();
  }
  // A trusted proxy names its client in X-Forwarded-For (appending to what the client
  // sent, which anyone can forge): the rightmost address that is not a trusted proxy is
  // the client. A proxy that sent only Forwarded or X-Real-IP names no client we read.
  if (headers.x_forwarded_for.empty()) {
    return !headers.any() && peer_address->is_loopback();
  }
  if (headers.x_forwarded_for.size() > kMaxForwardingHeaderBytes) return false;
  std::string_view rest = headers.x_forwarded_for;
  for (size_t hop = 0; hop < kMaxForwardedHops; ++hop) {
    const size_t comma = rest.rfind(',');
    const std::string_view entry = comma == std::string_view::npos ? rest : rest.substr(comma + 1);
    const std::optional<ip::address> address = ParseAddress(entry);
    if (!address) return false;  // "unknown", a port, garbage: no client we can judge
    // The leftmost address is the client even when it is a trusted proxy's address too (a
    // local client of a local proxy).
    if (!trusted.Contains(*address) || comma == std::string_view::npos) {
      return address->is_loopback();
    }
    rest = rest.substr(0, comma);
  }
  return false;  // more hops than we walk: no client found
}

}  // namespace inferd
