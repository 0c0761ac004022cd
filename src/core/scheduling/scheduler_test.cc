#include "core/scheduling/scheduler.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/scheduling/scheduler_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using testing::Completions;
using testing::Dynamic;
using ::testing::ElementsAre;
using testing::Event;
using testing::FakeModel;
using testing::Floats;
using ::testing::HasSubstr;
using testing::kHangTimeout;
using testing::MakeRequest;
using testing::Options;
using testing::TestConfig;

// --- basics ---------------------------------------------------------------------------------

TEST(SchedulerTest, CompletesRequestsWithAllOutputsInConfigOrder) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  ModelStats stats;
  Completions completions;
  Scheduler scheduler(Options(), &config, &model, &stats);

  scheduler.Enqueue(MakeRequest("a", {1.0f, -2.5f}, completions));
  scheduler.Enqueue(MakeRequest("b", {3.0f}, completions));
  ASSERT_TRUE(completions.WaitFor(2));

  const std::vector<Completions::Entry> entries = completions.entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].id, "a");  // one instance: first in, first out
  EXPECT_EQ(entries[1].id, "b");
  const InferResponse& a = entries[0].response;
  ASSERT_TRUE(a.status.ok()) << a.status;
  ASSERT_EQ(a.outputs.size(), 2u);
  EXPECT_EQ(a.outputs[0].name, "doubled");
  EXPECT_THAT(a.outputs[0].tensor.shape(), ElementsAre(2));
  EXPECT_THAT(Floats(a.outputs[0].tensor), ElementsAre(2.0f, -5.0f));
  EXPECT_EQ(a.outputs[1].name, "negated");
  EXPECT_THAT(Floats(a.outputs[1].tensor), ElementsAre(-1.0f, 2.5f));
  const InferResponse& b = entries[1].response;
  ASSERT_TRUE(b.status.ok()) << b.status;
  EXPECT_THAT(Floats(b.outputs[0].tensor), ElementsAre(6.0f));
  // Completed by an execution thread, not the enqueueing one.
  EXPECT_NE(entries[0].thread, std::this_thread::get_id());
}

TEST(SchedulerTest, ReturnsOnlyRequestedOutputsInRequestedOrder) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  ModelStats stats;
  Completions completions;
  Scheduler scheduler(Options(), &config, &model, &stats);

  auto only_negated = MakeRequest("a", {4.0f}, completions);
  only_negated->requested_outputs = {"negated"};
  scheduler.Enqueue(std::move(only_negated));
  auto both_reversed = MakeRequest("b", {4.0f}, completions);
  both_reversed->requested_outputs = {"negated", "doubled"};
  scheduler.Enqueue(std::move(both_reversed));
  ASSERT_TRUE(completions.WaitFor(2));

  const std::vector<Completions::Entry> entries = completions.entries();
  ASSERT_EQ(entries[0].response.outputs.size(), 1u);
  EXPECT_EQ(entries[0].response.outputs[0].name, "negated");
  EXPECT_THAT(Floats(entries[0].response.outputs[0].tensor), ElementsAre(-4.0f));
  ASSERT_EQ(entries[1].response.outputs.size(), 2u);
  EXPECT_EQ(entries[1].response.outputs[0].name, "negated");
  EXPECT_EQ(entries[1].response.outputs[1].name, "doubled");
  EXPECT_THAT(Floats(entries[1].response.outputs[1].tensor), ElementsAre(8.0f));
}

TEST(SchedulerTest, PropagatesExecuteFailure) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  model.FailWith(absl::ResourceExhaustedError("out of tensor memory"));
  ModelStats stats;
  Completions completions;
  Scheduler scheduler(Options(), &config, &model, &stats);

  scheduler.Enqueue(MakeRequest("a", {1.0f}, completions));
  ASSERT_TRUE(completions.WaitFor(1));

  const InferResponse response = completions.entries()[0].response;
  EXPECT_EQ(response.status, absl::ResourceExhaustedError("out of tensor memory"));
  EXPECT_TRUE(response.outputs.empty());
  const ModelStatsSnapshot snapshot = stats.Snapshot();
  EXPECT_EQ(snapshot.fail.count, 1u);
  EXPECT_EQ(snapshot.success.count, 0u);
  EXPECT_EQ(snapshot.execution_count, 0u);  // a failed call is not an execution
}

TEST(SchedulerTest, ExecuteFailureReachesEveryRequestOfTheBatch) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  Event gate;
  model.BlockOn(&gate);
  model.FailWith(absl::InternalError("kernel exploded"));
  ModelStats stats;
  Completions completions;
  SchedulerOptions options = Options();
  options.batch_policy = Dynamic(8, Duration::zero());
  Scheduler scheduler(options, &config, &model, &stats);

  scheduler.Enqueue(MakeRequest("first", {0.0f}, completions));
  ASSERT_TRUE(model.first_entered.WaitWithTimeout(kHangTimeout));
  scheduler.Enqueue(MakeRequest("a", {1.0f}, completions));
  scheduler.Enqueue(MakeRequest("b", {2.0f, 3.0f}, completions));
  gate.Notify();
  ASSERT_TRUE(completions.WaitFor(3));

  // The merged batch failed, so its two requests ran again alone, and failed alone too.
  EXPECT_THAT(model.batch_rows(), ElementsAre(1u, 3u, 1u, 2u));
  for (const Completions::Entry& entry : completions.entries()) {
    EXPECT_EQ(entry.response.status, absl::InternalError("kernel exploded")) << entry.id;
  }
  EXPECT_EQ(stats.Snapshot().fail.count, 3u);
}

// Regression (issue 13, fault injection): one poisoned request merged into a batch failed
// every request of that batch; its batch-mates must get their answers.
TEST(SchedulerTest, PoisonedRequestDoesNotFailItsBatchMates) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  Event gate;
  model.BlockOn(&gate);
  model.FailIfContains(666.0f, absl::InvalidArgumentError("poisoned row"));
  ModelStats stats;
  Completions completions;
  SchedulerOptions options = Options();
  options.batch_policy = Dynamic(8, Duration::zero());
  Scheduler scheduler(options, &config, &model, &stats);

  scheduler.Enqueue(MakeRequest("first", {0.0f}, completions));
  ASSERT_TRUE(model.first_entered.WaitWithTimeout(kHangTimeout));
  scheduler.Enqueue(MakeRequest("good", {1.0f}, completions));
  scheduler.Enqueue(MakeRequest("bad", {666.0f}, completions));
  scheduler.Enqueue(MakeRequest("also-good", {2.0f, 3.0f}, completions));
  gate.Notify();
  ASSERT_TRUE(completions.WaitFor(4));

  // first alone, the merged three (failed), then each of the three alone.
  EXPECT_THAT(model.batch_rows(), ElementsAre(1u, 4u, 1u, 1u, 2u));
  EXPECT_EQ(completions.Of("bad").status, absl::InvalidArgumentError("poisoned row"));
  const InferResponse good = completions.Of("good");
  ASSERT_TRUE(good.status.ok()) << good.status;
  EXPECT_THAT(Floats(good.outputs[0].tensor), ElementsAre(2.0f));
  const InferResponse also_good = completions.Of("also-good");
  ASSERT_TRUE(also_good.status.ok()) << also_good.status;
  EXPECT_THAT(Floats(also_good.outputs[0].tensor), ElementsAre(4.0f, 6.0f));
  EXPECT_EQ(stats.Snapshot().fail.count, 1u);
}

TEST(SchedulerTest, StopCompletesEveryQueuedRequestBeforeReturning) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  Event gate;
  model.BlockOn(&gate);
  ModelStats stats;
  Completions completions;
  Completions probes;  // probes sent while waiting for Stop to begin (see below)
  Scheduler scheduler(Options(), &config, &model, &stats);

  // The first request occupies the only instance; the other 19 wait in the queue.
  scheduler.Enqueue(MakeRequest("0", {0.0f}, completions));
  ASSERT_TRUE(model.first_entered.WaitWithTimeout(kHangTimeout));
  for (int i = 1; i < 20; ++i) {
    scheduler.Enqueue(MakeRequest(std::to_string(i), {static_cast<float>(i)}, completions));
  }
  EXPECT_EQ(scheduler.queue_depth(), 19u);

  size_t completed_when_stop_returned = 0;
  size_t probes_when_stop_returned = 0;
  Event stop_returned;
  std::thread stopper([&] {
    scheduler.Stop();
    completed_when_stop_returned = completions.size();
    probes_when_stop_returned = probes.size();
    stop_returned.Notify();
  });

  // Wait, without sleeping, until Stop has begun: from then on Enqueue refuses at once, on
  // this thread. A probe accepted before that is queued behind the blocked instance, so it
  // cannot complete yet: the recorder grows only when a probe is refused.
  size_t accepted_probes = 0;
  bool refused = false;
  while (!refused && accepted_probes < 10000000u) {
    scheduler.Enqueue(MakeRequest("probe", {1.0f}, probes));
    refused = probes.size() > 0;
    if (!refused) ++accepted_probes;
    std::this_thread::yield();
  }
  const bool returned_while_blocked = stop_returned.HasBeenNotified();
  gate.Notify();
  stopper.join();

  ASSERT_TRUE(refused) << "Stop never began refusing requests";
  EXPECT_FALSE(returned_while_blocked) << "Stop returned while a request was executing";
  EXPECT_EQ(probes.entries()[0].response.status.code(), absl::StatusCode::kUnavailable);

  // Every request accepted before Stop, probes included, was answered before it returned.
  EXPECT_EQ(completed_when_stop_returned, 20u);
  EXPECT_EQ(probes_when_stop_returned, accepted_probes + 1);
  const std::vector<Completions::Entry> entries = completions.entries();
  ASSERT_EQ(entries.size(), 20u);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(entries[i].id, std::to_string(i));
    ASSERT_TRUE(entries[i].response.status.ok()) << entries[i].response.status;
    EXPECT_THAT(Floats(entries[i].response.outputs[0].tensor), ElementsAre(2.0f * i));
  }
  const std::vector<Completions::Entry> probe_entries = probes.entries();
  for (size_t i = 1; i < probe_entries.size(); ++i) {  // [0] is the refused one
    EXPECT_TRUE(probe_entries[i].response.status.ok()) << probe_entries[i].response.status;
  }
  EXPECT_EQ(scheduler.queue_depth(), 0u);
}

TEST(SchedulerTest, EnqueueAfterStopCompletesAtOnceWithUnavailable) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  ModelStats stats;
  Completions completions;
  Scheduler scheduler(Options("mlp:3", 2), &config, &model, &stats);
  scheduler.Stop();

  scheduler.Enqueue(MakeRequest("late", {1.0f}, completions));

  // Completed synchronously, on this thread, without running the model.
  ASSERT_EQ(completions.size(), 1u);
  const Completions::Entry entry = completions.entries()[0];
  EXPECT_EQ(entry.thread, std::this_thread::get_id());
  EXPECT_EQ(entry.response.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(entry.response.status.message()),
              HasSubstr("model 'mlp:3' is shutting down"));
  EXPECT_EQ(model.calls(), 0);
}

TEST(SchedulerTest, StopIsIdempotent) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  ModelStats stats;
  Completions completions;
  Scheduler scheduler(Options("m:1", 2), &config, &model, &stats);
  scheduler.Enqueue(MakeRequest("queued", {1.0f}, completions));
  scheduler.Stop();  // answers what was queued
  ASSERT_EQ(completions.size(), 1u);
  EXPECT_TRUE(completions.entries()[0].response.status.ok());
  // A second Stop (and the destructor's) neither joins the threads again nor answers twice,
  // and the scheduler still refuses new work.
  scheduler.Stop();
  EXPECT_EQ(completions.size(), 1u);
  scheduler.Enqueue(MakeRequest("late", {2.0f}, completions));
  ASSERT_EQ(completions.size(), 2u);
  EXPECT_EQ(completions.entries()[1].response.status.code(), absl::StatusCode::kUnavailable);
}

TEST(SchedulerTest, InstancesExecuteConcurrently) {
  const ModelConfig config = TestConfig(/*instances=*/2);
  FakeModel model;
  model.RendezvousOf(2);  // each call waits until both are inside Execute
  ModelStats stats;
  Completions completions;
  Scheduler scheduler(Options("m:1", 2), &config, &model, &stats);

  scheduler.Enqueue(MakeRequest("a", {1.0f}, completions));
  scheduler.Enqueue(MakeRequest("b", {2.0f}, completions));
  ASSERT_TRUE(completions.WaitFor(2));

  EXPECT_FALSE(model.rendezvous_timed_out()) << "the two instances never ran at once";
  for (const Completions::Entry& entry : completions.entries()) {
    EXPECT_TRUE(entry.response.status.ok()) << entry.response.status;
  }
  const std::vector<Completions::Entry> entries = completions.entries();
  EXPECT_NE(entries[0].thread, entries[1].thread);
}

// --- busy polling ---------------------------------------------------------------------------

// Instances that watch the queue without its lock (a budget far longer than the test, so
// they are polling whenever they are not executing) still answer every request with its own
// output; run under ThreadSanitizer by scripts/tsan-tests.
TEST(SchedulerTest, BusyPollingInstancesAnswerEveryRequestExactlyOnce) {
  const ModelConfig config = TestConfig(/*instances=*/2);
  FakeModel model;
  ModelStats stats;
  Completions completions;
  SchedulerOptions options = Options("m:1", 2);
  options.busy_poll = std::chrono::hours(1);
  Scheduler scheduler(options, &config, &model, &stats);

  constexpr int kThreads = 4;
  constexpr int kPerThread = 250;
  std::vector<std::thread> clients;
  for (int t = 0; t < kThreads; ++t) {
    clients.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const int n = t * kPerThread + i;
        scheduler.Enqueue(MakeRequest(std::to_string(n), {static_cast<float>(n)}, completions));
      }
    });
  }
  for (std::thread& client : clients) client.join();
  ASSERT_TRUE(completions.WaitFor(kThreads * kPerThread));

  std::vector<int> answered(kThreads * kPerThread, 0);
  for (const Completions::Entry& entry : completions.entries()) {
    ASSERT_TRUE(entry.response.status.ok()) << entry.response.status;
    const int n = std::stoi(entry.id);
    ++answered[n];
    EXPECT_THAT(Floats(entry.response.outputs[0].tensor), ElementsAre(2.0f * n));
  }
  for (int n = 0; n < kThreads * kPerThread; ++n) EXPECT_EQ(answered[n], 1) << "request " << n;
}

// Stop must reach an instance that is polling rather than waiting on the condition variable.
TEST(SchedulerTest, StopEndsBusyPollingAtOnce) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  ModelStats stats;
  Completions completions;
  SchedulerOptions options = Options();
  options.busy_poll = std::chrono::hours(1);
  Scheduler scheduler(options, &config, &model, &stats);
  scheduler.Enqueue(MakeRequest("a", {1.0f}, completions));
  ASSERT_TRUE(completions.WaitFor(1));  // the instance now polls for the next request

  Event stopped;
  std::thread stopper([&] {
    scheduler.Stop();
    stopped.Notify();
  });
  if (!stopped.WaitWithTimeout(kHangTimeout)) {
    // The stopper cannot be joined nor abandoned while the scheduler lives: end the run.
    std::fprintf(stderr, "Stop() did not return within 10 s: it waits for a polling instance\n");
    std::abort();
  }
  stopper.join();
}

// A client whose next request comes 3 ms after each reply (a round trip longer than the
// poll's floor) is caught by a poll that has stretched to that gap: the instance stops
// sleeping between its requests. With the ceiling at the floor it sleeps before each one.
TEST(SchedulerTest, PollStretchesToCatchAClientWithALongRoundTrip) {
  auto sleeps_between_requests = [](std::chrono::microseconds ceiling) {
    const ModelConfig config = TestConfig();
    FakeModel model;
    ModelStats stats;
    Completions completions;
    SchedulerOptions options = Options();
    options.busy_poll = std::chrono::microseconds(200);
    options.busy_poll_ceiling = ceiling;
    Scheduler scheduler(options, &config, &model, &stats);
    constexpr int kRequests = 20;
    for (int i = 0; i < kRequests; ++i) {
      scheduler.Enqueue(MakeRequest(std::to_string(i), {1.0f}, completions));
      EXPECT_TRUE(completions.WaitFor(i + 1));
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
    const std::vector<long> sleeps = model.sleeps_at_calls();
    EXPECT_EQ(sleeps.size(), static_cast<size_t>(kRequests));
    return sleeps.back() - sleeps[4];  // after the first few gaps were seen
  };
  // On a loaded machine a preempted poll outlasts its budget in real time and catches
  // arrivals without stretching, so the two cannot be told apart there.
  const long fixed = sleeps_between_requests(std::chrono::microseconds(200));
  if (fixed < 12) GTEST_SKIP() << "a 200 us poll slept before only " << fixed << " of 15 requests";
  EXPECT_LE(sleeps_between_requests(std::chrono::milliseconds(50)), 5);
}

// An instance left idle gives back the engine's helper threads once per idle spell, from its
// own thread (the engine's threads are per calling thread: common/openmp_team.h).
TEST(SchedulerTest, IdleInstanceReleasesEngineThreadsOncePerIdleSpell) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  ModelStats stats;
  Completions completions;
  SchedulerOptions options = Options();
  options.release_engine_threads_after = std::chrono::milliseconds(20);
  Scheduler scheduler(options, &config, &model, &stats);
  ASSERT_TRUE(model.WaitForReleases(1));  // idle from the start

  scheduler.Enqueue(MakeRequest("a", {1.0f}, completions));
  ASSERT_TRUE(completions.WaitFor(1));
  ASSERT_TRUE(model.WaitForReleases(2));  // idle again after the batch
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(model.releases(), 2) << "released again without a batch in between";

  const std::thread::id instance = completions.entries()[0].thread;
  for (const std::thread::id& thread : model.release_threads()) EXPECT_EQ(thread, instance);
}

// Requests that keep arriving within the idle period never cost a release.
TEST(SchedulerTest, BusyInstanceKeepsEngineThreads) {
  const ModelConfig config = TestConfig();
  FakeModel model;
  ModelStats stats;
  Completions completions;
  SchedulerOptions options = Options();
  options.release_engine_threads_after = std::chrono::hours(1);
  Scheduler scheduler(options, &config, &model, &stats);
  for (int i = 0; i < 20; ++i) {
    scheduler.Enqueue(MakeRequest(std::to_string(i), {1.0f}, completions));
    ASSERT_TRUE(completions.WaitFor(i + 1));
  }
  EXPECT_EQ(model.releases(), 0);
}

}  // namespace
}  // namespace inferd
