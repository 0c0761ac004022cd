#include "server/stop_signals.h"

#include <pthread.h>

#include <chrono>
#include <csignal>

#include <gtest/gtest.h>

namespace inferd {
namespace {

using std::chrono::milliseconds;

// Signals are sent to this thread only (pthread_kill): the test binary's other threads do
// not block SIGTERM, and a process-wide one would end the test run.
class StopSignalsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    // Leave no pending signal behind for later tests.
    timespec zero{};
    sigset_t both;
    sigemptyset(&both);
    sigaddset(&both, SIGTERM);
    sigaddset(&both, SIGINT);
    while (sigtimedwait(&both, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_UNBLOCK, &both, nullptr);
  }
};

TEST_F(StopSignalsTest, WaitForStopReturnsTheSignalThatArrived) {
  StopSignals signals;
  pthread_kill(pthread_self(), SIGINT);
  EXPECT_EQ(signals.WaitForStop(), SIGINT);
  pthread_kill(pthread_self(), SIGTERM);
  EXPECT_EQ(signals.WaitForStop(), SIGTERM);
}

TEST_F(StopSignalsTest, DrainLastsItsWholePeriodWithoutAnotherSignal) {
  StopSignals signals;
  EXPECT_GE(signals.WaitOutDrain(milliseconds(60)), milliseconds(60));
}

TEST_F(StopSignalsTest, SecondSignalEndsTheDrainEarly) {
  StopSignals signals;
  pthread_kill(pthread_self(), SIGTERM);
  // Far longer than any test may take: only the pending signal lets it return.
  EXPECT_LT(signals.WaitOutDrain(milliseconds(600'000)), milliseconds(60'000));
}

TEST_F(StopSignalsTest, ZeroDrainReturnsAtOnce) {
  StopSignals signals;
  EXPECT_LT(signals.WaitOutDrain(milliseconds(0)), milliseconds(60'000));
}

}  // namespace
}  // namespace inferd
