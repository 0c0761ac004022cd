// A model version's response cache (config.yaml `response_cache:`, Triton's anchor): answers
// a request whose inputs are byte-for-byte those of an earlier successful one from memory,
// without queueing or running the model.
//
// Keyed by a SHA-256 over the model, version, tenant (unless shared across tenants), the
// outputs asked for and every input's name, datatype, shape and bytes. Cryptographic on
// purpose: inputs are client-chosen, and with a 64-bit hash a client could craft a collision
// that answers another client's request with its own outputs. Entries keep the digest and a
// copy of the outputs (never the inputs), charged their bytes plus a fixed overhead, and are
// evicted least recently used first to stay under max_bytes; an answer over an eighth of
// max_bytes is not kept (one large answer would flush everything else).
//
// One cache belongs to one ServedModel: a reloaded or new version starts empty, so an answer
// can never outlive the version that computed it.
// Thread-safety: thread-safe; one mutex, held for map and list operations only (the digest
// and the copies are made outside it).
#ifndef INFERD_CORE_MODEL_RESPONSE_CACHE_H_
#define INFERD_CORE_MODEL_RESPONSE_CACHE_H_

#include <array>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"
#include "core/backend/infer_request.h"
#include "core/types/tensor.h"

namespace inferd {

struct ResponseCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t insertions = 0;
  uint64_t evictions = 0;
  uint64_t bytes = 0;  // charged to the entries held now
  uint64_t entries = 0;
  uint64_t max_bytes = 0;
};

class ResponseCache {
 public:
  using Key = std::array<unsigned char, 32>;

  // What one entry costs beyond its outputs' bytes: the list node, map slot, names, shapes.
  static constexpr uint64_t kEntryOverheadBytes = 256;

  explicit ResponseCache(uint64_t max_bytes) : max_bytes_(max_bytes) {}

  // The key for `request` (inputs already validated and in config order) on `model` at
  // `version`; `tenant` empty when the cache is shared across tenants.
  static Key KeyFor(std::string_view model, int64_t version, std::string_view tenant,
                    const InferRequest& request);

  // The outputs cached under `key` (handles to the cache's immutable copies), counted as a
  // hit or a miss.
  std::optional<std::vector<NamedTensor>> Lookup(const Key& key);

  // Keeps a copy of `outputs` under `key`, evicting the least recently used entries to stay
  // under max_bytes. Skipped when the answer is over max_bytes / 8, when the copy cannot be
  // allocated, or when another request cached the same key meanwhile.
  void Insert(const Key& key, const std::vector<NamedTensor>& outputs);

  ResponseCacheStats Stats() const;

 private:
  struct Entry {
    Key key;
    std::vector<NamedTensor> outputs;
    uint64_t charge = 0;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const;
  };

  const uint64_t max_bytes_;
  mutable Mutex mu_;
  std::list<Entry> lru_ ABSL_GUARDED_BY(mu_);  // most recently used first
  std::unordered_map<Key, std::list<Entry>::iterator, KeyHash> index_ ABSL_GUARDED_BY(mu_);
  ResponseCacheStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inferd

#endif  // INFERD_CORE_MODEL_RESPONSE_CACHE_H_
