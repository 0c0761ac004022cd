#include "common/clock.h"

namespace inferd {

const TimeSource* RealTime() {
  static const RealTimeSource* const source = new RealTimeSource();
  return source;
}

int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace inferd
