// Whether the client behind a request is on this host: what the keyless-management rule asks
// (auth/access_policy.h). A loopback peer is not enough: a reverse proxy on the same host
// (deploy/nginx) connects from loopback and relays anyone's requests. So a request that
// carries a forwarding header (Forwarded, X-Forwarded-For, X-Real-IP) counts as remote,
// unless its peer is a proxy the operator trusts (--trusted-proxies); then the client is the
// rightmost X-Forwarded-For address that is not itself a trusted proxy, and that address
// must be loopback.
//
// Thread-safety: TrustedProxies is immutable after Parse; IsLocalClient is a pure function.
#ifndef INFERD_AUTH_CLIENT_ORIGIN_H_
#define INFERD_AUTH_CLIENT_ORIGIN_H_

#include <string_view>
#include <vector>

#include <boost/asio/ip/address.hpp>

#include "absl/status/statusor.h"

namespace inferd {

// Bounds on what operators and clients hand in: a list longer than this is a mistake, and a
// forwarding chain is walked at most kMaxForwardedHops addresses from the right (a longer
// one is judged remote); header values beyond kMaxForwardingHeaderBytes are not parsed.
inline constexpr size_t kMaxTrustedProxies = 64;
inline constexpr size_t kMaxForwardedHops = 16;
inline constexpr size_t kMaxForwardingHeaderBytes = 4096;

class TrustedProxies {
 public:
  TrustedProxies() = default;
  // "127.0.0.1,::1": IP addresses, comma-separated (spaces allowed); "" for none.
  // InvalidArgument naming the bad entry, or when there are more than kMaxTrustedProxies.
  static absl::StatusOr<TrustedProxies> Parse(std::string_view list);

  bool Contains(const boost::asio::ip::address& address) const;
  bool empty() const { return addresses_.empty(); }

 private:
  std::vector<boost::asio::ip::address> addresses_;
};

// The forwarding headers of one request (empty when absent).
struct ForwardingHeaders {
  std::string_view forwarded;
  std::string_view x_forwarded_for;
  std::string_view x_real_ip;

  bool any() const { return !forwarded.empty() || !x_forwarded_for.empty() || !x_real_ip.empty(); }
};

// `peer` is the connection's remote IP address as text ("127.0.0.1", "::1"); anything that
// does not parse counts as remote.
bool IsLocalClient(std::string_view peer, const ForwardingHeaders& headers,
                   const TrustedProxies& trusted);

}  // namespace inferd

#endif  // INFERD_AUTH_CLIENT_ORIGIN_H_
