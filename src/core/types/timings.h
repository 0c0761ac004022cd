// Plain timing records that statistics of every kind share: a count with its summed duration,
// and the phases of one engine call. Here, below every layer, because the scheduler's
// ModelStats, the observer hooks and a generating model's GenerationStats (core/backend) all
// report in them; they hold no lock and know no model.
#ifndef INFERD_CORE_TYPES_TIMINGS_H_
#define INFERD_CORE_TYPES_TIMINGS_H_

#include <chrono>
#include <cstdint>

#include "common/clock.h"

namespace inferd {

// How many times something happened and how long it took in all.
struct DurationStat {
  uint64_t count = 0;
  uint64_t ns = 0;
  void Add(Duration d) {
    ++count;
    ns += static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
  }
};

// The phases of one engine call over a batch.
struct BatchTimes {
  Duration compute_input{0};
  Duration compute_infer{0};
  Duration compute_output{0};
};

}  // namespace inferd

#endif  // INFERD_CORE_TYPES_TIMINGS_H_
