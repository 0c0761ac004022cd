// How inferd waits for the signals that stop it, and the drain period between them.
//
// A rolling update (Kubernetes, swarm, an nginx pool) sends SIGTERM and keeps routing new
// requests to the replica until it sees readiness fail or the endpoint leaves the
// balancer's list, which takes seconds. So SIGTERM starts a drain period in which the
// caller reports not-ready but still accepts and serves; only afterwards does it close its
// listeners. SIGINT (Ctrl-C at a terminal) skips the drain, and a second signal during the
// drain ends it at once.
//
// Thread-safety: call from the one thread that has the signals blocked (main).
#ifndef INFERD_SERVER_STOP_SIGNALS_H_
#define INFERD_SERVER_STOP_SIGNALS_H_

#include <signal.h>

#include <chrono>

namespace inferd {

class StopSignals {
 public:
  // Blocks SIGTERM and SIGINT in the calling thread; threads started afterwards inherit
  // the mask, so only WaitForStop receives them.
  StopSignals();

  // Blocks until SIGTERM or SIGINT arrives; returns its number.
  int WaitForStop();

  // After SIGTERM: waits `drain`, or less if SIGTERM or SIGINT arrives again. Returns the
  // time actually waited.
  std::chrono::milliseconds WaitOutDrain(std::chrono::milliseconds drain);

 private:
  sigset_t signals_;
};

}  // namespace inferd

#endif  // INFERD_SERVER_STOP_SIGNALS_H_
