#include "core/model/response_cache.h"

#include <cstring>
#include <memory>
#include <utility>

#include <openssl/evp.h>

namespace inferd {
namespace {

// Appends fields to the digest with their lengths, so that no two different requests can
// produce the same byte stream ("ab" + "c" vs "a" + "bc").
class KeyWriter {
 public:
  KeyWriter() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    if (ctx_) EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr);
  }

  void Number(uint64_t value) { Bytes(&value, sizeof(value)); }
  void Text(std::string_view text) {
    Number(text.size());
    Bytes(text.data(), text.size());
  }
  void Bytes(const void* data, size_t size) {
    if (ctx_ && size > 0) EVP_DigestUpdate(ctx_.get(), data, size);
  }

  ResponseCache::Key Finish() {
    ResponseCache::Key key{};
    unsigned int length = 0;
    if (ctx_) EVP_DigestFinal_ex(ctx_.get(), key.data(), &length);
    return key;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx_;
};

uint64_t OutputBytes(const std::vector<NamedTensor>& outputs) {
  uint64_t bytes = 0;
  for (const NamedTensor& output : outputs) bytes += output.tensor.byte_size();
  return bytes;
}

// A copy the cache owns: an engine's output may be a view that keeps a whole request body
// or engine buffer alive, which the entry's charge would not count.
std::optional<std::vector<NamedTensor>> CopyOutputs(const std::vector<NamedTensor>& outputs) {
  std::vector<NamedTensor> copies;
  copies.reserve(outputs.size());
  for (const NamedTensor& output : outputs) {
    const Tensor& source = output.tensor;
    absl::StatusOr<Tensor> copy =
        Tensor::AllocateForOverwrite(source.type(), source.shape(), source.byte_size());
    if (!copy.ok()) return std::nullopt;
    if (source.byte_size() > 0) {
      std::memcpy(copy->mutable_data(), source.data(), source.byte_size());
    }
    copies.push_back({output.name, *std::move(copy)});
  }
  return copies;
}

}  // namespace

size_t ResponseCache::KeyHash::operator()(const Key& key) const {
  // The key is already a uniform digest: its first bytes are as good as any hash of it.
  size_t hash = 0;
  std::memcpy(&hash, key.data(), sizeof(hash));
  return hash;
}

ResponseCache::Key ResponseCache::KeyFor(std::string_view model, int64_t version,
                                         std::string_view tenant, const InferRequest& request) {
  KeyWriter writer;
  writer.Text(model);
  writer.Number(static_cast<uint64_t>(version));
  writer.Text(tenant);
  writer.Number(request.requested_outputs.size());
  for (const std::string& output : request.requested_outputs) writer.Text(output);
  writer.Number(request.inputs.size());
  for (const NamedTensor& input : request.inputs) {
    writer.Text(input.name);
    writer.Number(static_cast<uint64_t>(input.tensor.type()));
    writer.Number(input.tensor.shape().size());
    for (int64_t dim : input.tensor.shape()) writer.Number(static_cast<uint64_t>(dim));
    writer.Number(input.tensor.byte_size());
    writer.Bytes(input.tensor.data(), input.tensor.byte_size());
  }
  return writer.Finish();
}

std::optional<std::vector<NamedTensor>> ResponseCache::Lookup(const Key& key) {
  MutexLock lock(&mu_);
  auto found = index_.find(key);
  if (found == index_.end()) {
    ++stats_.misses;
    return std::nullopt;
  }
  ++stats_.hits;
  lru_.splice(lru_.begin(), lru_, found->second);
  return found->second->outputs;  // copies of the handles; the bytes are shared, immutable
}

void ResponseCache::Insert(const Key& key, const std::vector<NamedTensor>& outputs) {
  const uint64_t charge = OutputBytes(outputs) + sizeof(Key) + kEntryOverheadBytes;
  if (charge > max_bytes_ / 8) return;
  std::optional<std::vector<NamedTensor>> copies = CopyOutputs(outputs);
  if (!copies) return;
  std::list<Entry> evicted;  // destroyed after the lock is released
  MutexLock lock(&mu_);
  if (index_.count(key)) return;
  while (!lru_.empty() && stats_.bytes + charge > max_bytes_) {
    index_.erase(lru_.back().key);
    stats_.bytes -= lru_.back().charge;
    ++stats_.evictions;
    evicted.splice(evicted.begin(), lru_, std::prev(lru_.end()));
  }
  lru_.push_front(Entry{key, *std::move(copies), charge});
  index_.emplace(key, lru_.begin());
  stats_.bytes += charge;
  ++stats_.insertions;
}

ResponseCacheStats ResponseCache::Stats() const {
  MutexLock lock(&mu_);
  ResponseCacheStats stats = stats_;
  stats.entries = index_.size();
  stats.max_bytes = max_bytes_;
  return stats;
}

}  // namespace inferd
