#include "server/tls_files.h"

#include <fstream>
#include <memory>

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "common/strings.h"

namespace inferd {
namespace {

constexpr size_t kMaxPemBytes = 1 << 20;

absl::StatusOr<std::string> ReadSmallFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat("cannot read the TLS ", what, " file ", path));
  std::string text(kMaxPemBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxPemBytes) {
    return absl::InvalidArgumentError(StrCat("the TLS ", what, " file ", path, " is over 1 MiB"));
  }
  return text;
}

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};

}  // namespace

absl::StatusOr<TlsPem> ReadTlsFiles(const std::string& cert_path, const std::string& key_path) {
  TlsPem pem;
  absl::StatusOr<std::string> cert = ReadSmallFile(cert_path, "certificate");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadSmallFile(key_path, "key");
  if (!key.ok()) return key.status();
  pem.cert_chain = *std::move(cert);
  pem.private_key = *std::move(key);

  std::unique_ptr<BIO, BioFree> cert_bio(
      BIO_new_mem_buf(pem.cert_chain.data(), static_cast<int>(pem.cert_chain.size())));
  std::unique_ptr<X509, X509Free> x509(
      PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  if (!x509) {
    return absl::InvalidArgumentError(StrCat(cert_path, " holds no PEM certificate"));
  }
  std::unique_ptr<BIO, BioFree> key_bio(
      BIO_new_mem_buf(pem.private_key.data(), static_cast<int>(pem.private_key.size())));
  std::unique_ptr<EVP_PKEY, KeyFree> private_key(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (!private_key) {
    return absl::InvalidArgumentError(StrCat(key_path, " holds no unencrypted PEM private key"));
  }
  if (X509_check_private_key(x509.get(), private_key.get()) != 1) {
    return absl::InvalidArgumentError(StrCat("the private key in ", key_path,
                                             " does not belong to the certificate in ", cert_path));
  }
  return pem;
}

}  // namespace inferd
