#include "common/clock.h"

namespace inferd {

const TimeSource* RealTime() {
  static const RealTimeSource* const source = new RealTimeSource();
  return source;
}

}  // namespace inferd
