// How many CPU cores this process may run on (its affinity mask, which containers and
// taskset narrow), for sizing thread pools.
#ifndef INFERD_COMMON_CORES_H_
#define INFERD_COMMON_CORES_H_

namespace inferd {

int CoresAvailable();

}  // namespace inferd

#endif  // INFERD_COMMON_CORES_H_
