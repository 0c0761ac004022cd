// The streamed replies in progress on a server's connections, so that shutdown can end each
// one properly when its drain deadline passes: with a final error event and the chunked
// terminator, instead of a stream cut off mid-way that a client cannot tell from a crash.
// Thread-safety: every method is thread-safe. The callbacks run on the caller's thread
// (EndAll) and must only post work to their session's strand.
#ifndef INFERD_FRONTENDS_HTTP_TRANSPORT_OPEN_STREAMS_H_
#define INFERD_FRONTENDS_HTTP_TRANSPORT_OPEN_STREAMS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "common/mutex.h"

namespace inferd {

class OpenStreams {
 public:
  // Registers `end` (it asks one session to end its stream); the id is for Remove.
  uint64_t Add(std::function<void()> end) {
    MutexLock lock(&mu_);
    const uint64_t id = ++next_id_;
    ends_.emplace(id, std::move(end));
    return id;
  }
  void Remove(uint64_t id) {
    MutexLock lock(&mu_);
    ends_.erase(id);
  }
  // Asks every registered stream to end (outside the lock: a callback may finish at once).
  // Returns how many were asked.
  size_t EndAll() {
    std::vector<std::function<void()>> ends;
    {
      MutexLock lock(&mu_);
      for (auto& [id, end] : ends_) ends.push_back(end);
    }
    for (auto& end : ends) end();
    return ends.size();
  }

 private:
  Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, std::function<void()>> ends_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_TRANSPORT_OPEN_STREAMS_H_
