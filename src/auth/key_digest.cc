#include "auth/key_digest.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "common/strings.h"

namespace inferd {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

KeyDigest DigestOfKey(std::string_view key) {
  KeyDigest digest;
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest.data());
  return digest;
}

bool DigestsEqual(const KeyDigest& a, const KeyDigest& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

absl::StatusOr<KeyDigest> ParseDigestHex(std::string_view hex) {
  KeyDigest digest;
  if (hex.size() != 2 * digest.size()) {
    return absl::InvalidArgumentError(StrCat(
        "a sha256 digest is 64 hex digits (sha256sum prints it); got ", hex.size(), " characters"));
  }
  for (size_t i = 0; i < digest.size(); ++i) {
    const int high = HexValue(hex[2 * i]);
    const int low = HexValue(hex[2 * i + 1]);
    if (high < 0 || low < 0) {
      return absl::InvalidArgumentError("a sha256 digest may hold only hex digits 0-9, a-f");
    }
    digest[i] = static_cast<uint8_t>(high * 16 + low);
  }
  return digest;
}

std::string DigestHex(const KeyDigest& digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * digest.size());
  for (uint8_t byte : digest) {
    out += kDigits[byte >> 4];
    out += kDigits[byte & 15];
  }
  return out;
}

}  // namespace inferd
