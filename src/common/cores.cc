#include "common/cores.h"

#include <sched.h>

namespace inferd {

int CoresAvailable() {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
}

}  // namespace inferd
