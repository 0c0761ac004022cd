// SHA-256 digests of API keys and their constant-time comparison.
//
// Keys are never kept or compared as plain text: the key ring holds digests, and a presented
// key is hashed and compared with CRYPTO_memcmp, whose time does not depend on where two
// digests differ. Hashing first also makes the comparison's length fixed, so neither a key's
// length nor its prefix leaks through timing.
#ifndef INFERD_AUTH_KEY_DIGEST_H_
#define INFERD_AUTH_KEY_DIGEST_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace inferd {

using KeyDigest = std::array<uint8_t, 32>;

KeyDigest DigestOfKey(std::string_view key);

// True when the digests are equal; takes the same time whatever their contents.
bool DigestsEqual(const KeyDigest& a, const KeyDigest& b);

// 64 hex digits (either case), as `sha256sum` prints them.
absl::StatusOr<KeyDigest> ParseDigestHex(std::string_view hex);
std::string DigestHex(const KeyDigest& digest);

}  // namespace inferd

#endif  // INFERD_AUTH_KEY_DIGEST_H_
