// Hooks through which a served model reports what happens to it, so that metrics can be kept
// without core knowing about Prometheus (src/observability implements these interfaces).
//
// A ModelObserver belongs to one model version and is created when it loads, so the hot path
// calls straight into objects that already hold their metric handles: no lookup per request.
// Thread-safety: implementations must be thread-safe; the hooks are called from execution
// threads and I/O threads at once, and must not block.
#ifndef INFERD_CORE_SCHEDULING_MODEL_OBSERVER_H_
#define INFERD_CORE_SCHEDULING_MODEL_OBSERVER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "common/clock.h"
#include "core/types/timings.h"

namespace inferd {

class ModelObserver {
 public:
  virtual ~ModelObserver() = default;
  // One successful engine call over `rows` rows (the batch size) and its phase times.
  virtual void OnBatchExecuted(int64_t rows, const BatchTimes& times) = 0;
  // A request left the queue for execution after waiting `queued`.
  virtual void OnRequestDequeued(Duration queued) = 0;
  // A request to this model was answered, whichever protocol it came by: its final status
  // and its latency from arrival to reply. Frontends report this; see
  // observability/request_finished.h.
  virtual void OnRequestFinished(absl::StatusCode code, Duration latency) = 0;
  // A response cache lookup (config.yaml `response_cache:`): answered from the cache or not.
  virtual void OnCacheLookup(bool hit) { (void)hit; }
};

class ModelObserverFactory {
 public:
  virtual ~ModelObserverFactory() = default;
  // The observer for a version about to load; called once per load.
  virtual std::shared_ptr<ModelObserver> ForModel(std::string_view name, int64_t version) = 0;
  // A load attempt finished after `duration`: `status` is OK when the version is ready.
  // `version` is absent when the model failed before a version was chosen.
  virtual void OnModelLoadFinished(std::string_view name, std::optional<int64_t> version,
                                   Duration duration, const absl::Status& status) = 0;
};

}  // namespace inferd

#endif  // INFERD_CORE_SCHEDULING_MODEL_OBSERVER_H_
