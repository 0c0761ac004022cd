// The llama engine's decode loop, run over a scripted DecodeContext and a fake time: slot
// admission, chunked prompts, cancellation, deadlines, the queue limit, n > 1, statistics and
// shutdown, without a GGUF file.
#include "backends/llama/llama_engine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/fake_time_source.h"
#include "common/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

constexpr auto kPatience = std::chrono::seconds(10);

// A model of a stub: the token after token t is t + 1, token kEndOfGeneration ends a
// sequence, token t reads as the letter 'a' + t % 26. Each decode can be held until the test
// allows it, and one can be made to fail.
class ScriptedContext : public DecodeContext {
 public:
  static constexpr int32_t kVocabulary = 64;
  static constexpr int32_t kEndOfGeneration = 40;

  struct Row {
    int32_t token, position, sequence;
    bool logits;
  };

  int64_t cells() const override { return 4096; }
  int32_t vocabulary_size() const override { return kVocabulary; }
  int threads() const override { return 1; }
  int batch_threads() const override { return 1; }
  void SetThreads(int) override {}
  absl::Status SetAdapters(const AdapterSet&) override { return absl::OkStatus(); }

  int32_t Decode(const DecodeBatch& batch) override {
    MutexLock lock(&mu_);
    const int64_t step = ++started_;
    changed_.NotifyAll();
    changed_.Wait(&mu_,
                  [this, step]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return step <= allowed_; });
    std::vector<Row> rows;
    for (int32_t i = 0; i < batch.size(); ++i) {
      rows.push_back(
          {batch.tokens()[i], batch.positions()[i], batch.sequences()[i], batch.logits()[i] != 0});
    }
    steps_.push_back(rows);
    last_ = std::move(rows);
    return step == fail_step_ ? -3 : 0;
  }
  bool RemoveCells(int32_t sequence, int32_t from) override {
    MutexLock lock(&mu_);
    removed_.emplace_back(sequence, from);
    return true;
  }
  int32_t Sample(TokenSampler&, int32_t row) override {
    MutexLock lock(&mu_);
    return (last_[static_cast<size_t>(row)].token + 1) % kVocabulary;
  }
  std::span<const float> Logits(int32_t) const override { return logits_; }
  bool IsEndOfGeneration(int32_t token) const override { return token == kEndOfGeneration; }
  std::string Piece(int32_t token) const override {
    return std::string(1, static_cast<char>('a' + token % 26));
  }

  // Decodes started from now on wait for Allow.
  void Hold() {
    MutexLock lock(&mu_);
    allowed_ = started_;
  }
  void Allow(int64_t steps = 1) {
    MutexLock lock(&mu_);
    allowed_ = std::min<int64_t>(allowed_, INT64_MAX - steps) + steps;
    changed_.NotifyAll();
  }
  void AllowAll() {
    MutexLock lock(&mu_);
    allowed_ = INT64_MAX;
    changed_.NotifyAll();
  }
  // True once `steps` decodes have started (the last of them possibly held).
  bool AwaitStarted(int64_t steps) {
    MutexLock lock(&mu_);
    return changed_.WaitUntil(&mu_, Clock::now() + kPatience,
                              [&]()
                                  ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return started_ >= steps; });
  }
  void FailStep(int64_t step) {
    MutexLock lock(&mu_);
    fail_step_ = step;
  }
  std::vector<std::vector<Row>> steps() const {
    MutexLock lock(&mu_);
    return steps_;
  }

 private:
  mutable Mutex mu_;
  CondVar changed_;
  int64_t started_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t allowed_ ABSL_GUARDED_BY(mu_) = INT64_MAX;
  int64_t fail_step_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::vector<Row>> steps_ ABSL_GUARDED_BY(mu_);
  std::vector<Row> last_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<int32_t, int32_t>> removed_ ABSL_GUARDED_BY(mu_);
  const std::vector<float> logits_ = std::vector<float>(kVocabulary, 0.0f);
};

// What a request was answered: its events, in order, from whatever thread sent them.
class Answers {
 public:
  void Add(GenerationEvent event) {
    MutexLock lock(&mu_);
    events_.push_back(std::move(event));
    changed_.NotifyAll();
  }
  // True once `choices` choices have ended.
  bool AwaitDone(int choices = 1) const {
    MutexLock lock(&mu_);
    return changed_.WaitUntil(
        &mu_, Clock::now() + kPatience,
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return DoneLocked() >= choices; });
  }
  bool AwaitText(int choice = 0) const {
    MutexLock lock(&mu_);
    return changed_.WaitUntil(
        &mu_, Clock::now() + kPatience,
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !TextLocked(choice).empty(); });
  }
  int done() const {
    MutexLock lock(&mu_);
    return DoneLocked();
  }
  std::string text(int choice = 0) const {
    MutexLock lock(&mu_);
    return TextLocked(choice);
  }
  // The end of `choice` (the test fails when there is none or more than one).
  GenerationEvent end(int choice = 0) const {
    MutexLock lock(&mu_);
    std::vector<GenerationEvent> ends;
    for (const GenerationEvent& event : events_) {
      if (event.done && event.choice == choice) ends.push_back(event);
    }
    EXPECT_EQ(ends.size(), 1u) << "choice " << choice;
    return ends.empty() ? GenerationEvent{} : ends.front();
  }

 private:
  int DoneLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return static_cast<int>(std::count_if(events_.begin(), events_.end(),
                                          [](const GenerationEvent& e) { return e.done; }));
  }
  std::string TextLocked(int choice) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::string text;
    for (const GenerationEvent& event : events_) {
      if (event.choice == choice) text += event.text;
    }
    return text;
  }

  mutable Mutex mu_;
  mutable CondVar changed_;
  std::vector<GenerationEvent> events_ ABSL_GUARDED_BY(mu_);
};

class LlamaEngineTest : public ::testing::Test {
 protected:
  LlamaEngineTest() {
    options_.parallel = 2;
    options_.batch_size = 8;
    options_.context_length = 64;
    options_.max_queue = 8;
    options_.threads = 1;
    options_.batch_threads = 1;
  }
  ~LlamaEngineTest() override {
    if (context_ != nullptr) context_->AllowAll();
    engine_.reset();
  }

  void Start() {
    auto context = std::make_unique<ScriptedContext>();
    context_ = context.get();
    // A prompt's letters are its tokens ('a' is 0); max_tokens 0 is 16.
    auto prepare = [](const GenerateRequest& request) -> absl::StatusOr<PreparedRequest> {
      auto tokens = std::make_shared<std::vector<int32_t>>();
      for (unsigned char c : request.prompt) tokens->push_back(c - 'a');
      return PreparedRequest{std::move(tokens), request.max_tokens > 0 ? request.max_tokens : 16,
                             nullptr, nullptr};
    };
    engine_ = LlamaEngine::CreateWithContext(std::move(context), prepare, options_, &time_);
  }

  // Sends a request for `prompt`; its answers go to the returned record.
  std::shared_ptr<Answers> Send(const std::string& prompt, int64_t max_tokens, int n = 1,
                                std::optional<Duration> timeout = std::nullopt,
                                std::shared_ptr<std::atomic<bool>>* cancelled = nullptr) {
    auto answers = std::make_shared<Answers>();
    auto request = std::make_unique<GenerateRequest>();
    request->prompt = prompt;
    request->max_tokens = max_tokens;
    request->n = n;
    request->arrival = time_.Now();
    if (timeout) request->deadline = time_.Now() + *timeout;
    if (cancelled != nullptr) *cancelled = request->cancelled;
    request->on_event = [answers](GenerationEvent event) { answers->Add(std::move(event)); };
    engine_->Generate(std::move(request));
    return answers;
  }

  // Waits until the engine's statistics satisfy `ready`.
  template <typename Predicate>
  bool AwaitStats(Predicate ready) {
    const TimePoint give_up = Clock::now() + kPatience;
    while (Clock::now() < give_up) {
      if (ready(engine_->Stats())) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }

  LlamaOptions options_;
  FakeTimeSource time_;
  ScriptedContext* context_ = nullptr;  // owned by engine_
  std::unique_ptr<LlamaEngine> engine_;
};

TEST_F(LlamaEngineTest, GeneratesTheScriptedTokensAndStopsAtMaxTokens) {
  Start();
  auto answers = Send("abc", 4);
  ASSERT_TRUE(answers->AwaitDone());
  // After "abc" (tokens 0 1 2) come 3 4 5 6: "defg".
  EXPECT_EQ(answers->text(), "defg");
  const GenerationEvent end = answers->end();
  EXPECT_TRUE(end.status.ok()) << end.status;
  EXPECT_EQ(end.finish_reason, FinishReason::kLength);
  EXPECT_EQ(end.usage.prompt_tokens, 3);
  EXPECT_EQ(end.usage.completion_tokens, 4);
}

TEST_F(LlamaEngineTest, EndOfGenerationTokenStops) {
  Start();
  // Token 38 ('m'), then 39 ('n'), then 40: the end.
  std::string prompt(1, static_cast<char>('a' + 38));
  auto answers = Send(prompt, 10);
  ASSERT_TRUE(answers->AwaitDone());
  EXPECT_EQ(answers->text(), "n");
  EXPECT_EQ(answers->end().finish_reason, FinishReason::kStop);
}

TEST_F(LlamaEngineTest, RequestWaitsForABusySlotThenRuns) {
  options_.parallel = 1;
  Start();
  context_->Hold();
  auto first = Send("ab", 3);
  ASSERT_TRUE(context_->AwaitStarted(1));  // the first prompt's step, held
  auto second = Send("cd", 2);
  ASSERT_TRUE(AwaitStats([](const GenerationStats& s) { return s.queued == 1; }));
  GenerationStats stats = engine_->Stats();
  EXPECT_EQ(stats.active_sequences, 1);
  EXPECT_EQ(second->done(), 0);
  context_->AllowAll();
  ASSERT_TRUE(first->AwaitDone());
  ASSERT_TRUE(second->AwaitDone());
  EXPECT_EQ(first->text(), "cde");
  EXPECT_EQ(second->text(), "ef");
  // One slot: the second sequence's rows use it after the first ended, never beside it.
  for (const auto& step : context_->steps()) {
    for (const auto& row : step) EXPECT_EQ(row.sequence, 0);
  }
  EXPECT_TRUE(AwaitStats([](const GenerationStats& s) {
    return s.queued == 0 && s.active_sequences == 0 && s.requests == 2;
  }));
}

TEST_F(LlamaEngineTest, LongPromptIsDecodedInChunksAndGenerationStartsAfterTheLastOne) {
  options_.batch_size = 4;
  Start();
  auto answers = Send("abcdefghij", 2);  // 10 tokens: chunks of 4, 4 and 2
  ASSERT_TRUE(answers->AwaitDone());
  const auto steps = context_->steps();
  ASSERT_EQ(steps.size(), 4u);
  ASSERT_EQ(steps[0].size(), 4u);
  ASSERT_EQ(steps[1].size(), 4u);
  ASSERT_EQ(steps[2].size(), 2u);
  ASSERT_EQ(steps[3].size(), 1u);
  for (size_t s = 0; s < 3; ++s) {
    for (size_t i = 0; i < steps[s].size(); ++i) {
      const int32_t position = static_cast<int32_t>(s * 4 + i);
      EXPECT_EQ(steps[s][i].position, position);
      EXPECT_EQ(steps[s][i].token, position);
      // Only the prompt's last token wants logits: the first sampled token follows it.
      EXPECT_EQ(steps[s][i].logits, position == 9) << "position " << position;
    }
  }
  // The generated token 'k' (10) is decoded at position 10, after the whole prompt.
  EXPECT_EQ(steps[3][0].token, 10);
  EXPECT_EQ(steps[3][0].position, 10);
  EXPECT_EQ(answers->text(), "kl");
  EXPECT_TRUE(AwaitStats([](const GenerationStats& s) {
    return s.prompt_tokens == 10 && s.completion_tokens == 2 && s.decode_steps == 4;
  }));
}

TEST_F(LlamaEngineTest, CancelledSequenceFreesItsSlotAtTheNextStepAndIsAnsweredOnce) {
  options_.parallel = 1;
  Start();
  std::shared_ptr<std::atomic<bool>> cancelled;
  context_->Hold();
  auto answers = Send("a", 30, 1, std::nullopt, &cancelled);
  context_->Allow(2);  // the prompt step and one generated token
  ASSERT_TRUE(answers->AwaitText());
  ASSERT_TRUE(context_->AwaitStarted(3));  // the third step is held
  cancelled->store(true);
  auto next = Send("c", 1);
  context_->AllowAll();
  ASSERT_TRUE(answers->AwaitDone());
  ASSERT_TRUE(next->AwaitDone());
  EXPECT_EQ(answers->end().status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(answers->done(), 1);
  EXPECT_TRUE(next->end().status.ok());
  // The tokens sampled by the three steps it took part in, and no more.
  EXPECT_EQ(answers->text(), "bcd");
}

TEST_F(LlamaEngineTest, ExpiredDeadlineIsAnsweredDeadlineExceededWhetherRunningOrQueued) {
  options_.parallel = 1;
  Start();
  context_->Hold();
  auto running = Send("a", 30, 1, std::chrono::seconds(5));
  ASSERT_TRUE(context_->AwaitStarted(1));
  auto queued = Send("b", 30, 1, std::chrono::seconds(5));
  ASSERT_TRUE(AwaitStats([](const GenerationStats& s) { return s.queued == 1; }));
  time_.Advance(std::chrono::seconds(6));
  context_->AllowAll();
  ASSERT_TRUE(running->AwaitDone());
  ASSERT_TRUE(queued->AwaitDone());
  EXPECT_EQ(running->end().status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(queued->end().status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(running->end().status.message()), HasSubstr("while it generated"));
  EXPECT_EQ(queued->text(), "");
}

TEST_F(LlamaEngineTest, FullQueueIsRefusedWithResourceExhaustedAndCounted) {
  options_.parallel = 1;
  options_.max_queue = 2;
  Start();
  context_->Hold();
  auto running = Send("a", 5);
  ASSERT_TRUE(context_->AwaitStarted(1));
  auto queued = Send("b", 5, 2);  // two sequences: the queue is full
  ASSERT_TRUE(AwaitStats([](const GenerationStats& s) { return s.queued == 2; }));
  auto refused = Send("c", 5);
  ASSERT_TRUE(refused->AwaitDone());
  const absl::Status status = refused->end().status;
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()), HasSubstr("parameters.max_queue 2"));
  EXPECT_EQ(engine_->Stats().requests_failed, 1u);
  context_->AllowAll();
  ASSERT_TRUE(running->AwaitDone());
  ASSERT_TRUE(queued->AwaitDone(2));
}

TEST_F(LlamaEngineTest, NChoicesShareOnePromptAndEachEndsOnce) {
  options_.parallel = 3;
  Start();
  auto answers = Send("abc", 3, 3);
  ASSERT_TRUE(answers->AwaitDone(3));
  for (int choice = 0; choice < 3; ++choice) {
    EXPECT_EQ(answers->text(choice), "def") << "choice " << choice;
    const GenerationEvent end = answers->end(choice);
    EXPECT_TRUE(end.status.ok());
    EXPECT_EQ(end.usage.prompt_tokens, 3);
  }
  // Each choice is a sequence of its own, its prompt in its own cells.
  std::map<int32_t, int> prompt_rows;
  for (const auto& step : context_->steps()) {
    for (const auto& row : step) {
      if (row.token < 3) ++prompt_rows[row.sequence];
    }
  }
  EXPECT_THAT(prompt_rows, ElementsAre(Pair(0, 3), Pair(1, 3), Pair(2, 3)));
}

TEST_F(LlamaEngineTest, StatisticsCountTokensCellsAndRequests) {
  Start();
  auto first = Send("abcd", 3);
  ASSERT_TRUE(first->AwaitDone());
  // The same prompt again: its cached prefix is reused (all but the last token, which must
  // be decoded again for its logits).
  auto second = Send("abcd", 3);
  ASSERT_TRUE(second->AwaitDone());
  EXPECT_EQ(second->end().usage.cached_prompt_tokens, 3);
  // Occupancy is published at the end of the step that finished the request.
  ASSERT_TRUE(AwaitStats(
      [](const GenerationStats& s) { return s.requests == 2 && s.active_sequences == 0; }));
  const GenerationStats stats = engine_->Stats();
  EXPECT_EQ(stats.parallel, 2);
  EXPECT_EQ(stats.context_length, 64);
  EXPECT_EQ(stats.kv_cells_total, 4096);
  EXPECT_EQ(stats.active_sequences, 0);
  EXPECT_EQ(stats.queued, 0);
  EXPECT_EQ(stats.requests_failed, 0u);
  EXPECT_EQ(stats.prompt_tokens, 4u + 1u);
  EXPECT_EQ(stats.cached_prompt_tokens, 3u);
  EXPECT_EQ(stats.completion_tokens, 6u);
  // The slot keeps its cache: the prompt and the two tokens decoded after it (the last
  // sampled one never is).
  EXPECT_EQ(stats.kv_cells_used, 6);
}

TEST_F(LlamaEngineTest, FailedDecodeEndsTheRunningSequencesWithInternal) {
  Start();
  context_->FailStep(1);
  auto answers = Send("ab", 3);
  ASSERT_TRUE(answers->AwaitDone());
  EXPECT_EQ(answers->end().status.code(), absl::StatusCode::kInternal);
  // The slot is free and its cells gone: the next request runs from scratch.
  auto next = Send("ab", 3);
  ASSERT_TRUE(next->AwaitDone());
  EXPECT_TRUE(next->end().status.ok());
  EXPECT_EQ(next->end().usage.cached_prompt_tokens, 0);
}

TEST_F(LlamaEngineTest, ShutdownAnswersRunningAndQueuedRequestsExactlyOnce) {
  options_.parallel = 1;
  Start();
  context_->Hold();
  auto running = Send("a", 30);
  ASSERT_TRUE(context_->AwaitStarted(1));
  auto queued = Send("b", 30, 2);
  ASSERT_TRUE(AwaitStats([](const GenerationStats& s) { return s.queued == 2; }));
  std::thread stopper([this] { engine_->Shutdown(); });
  // Shutdown has begun once a new request is refused at once as Unavailable (until then a
  // probe is queued, or refused by the full queue, and answered like the others).
  std::vector<std::shared_ptr<Answers>> probes;
  while (true) {
    probes.push_back(Send("z", 1));
    if (probes.back()->done() == 1 &&
        probes.back()->end().status.code() == absl::StatusCode::kUnavailable) {
      break;
    }
  }
  context_->AllowAll();
  stopper.join();
  ASSERT_TRUE(running->AwaitDone());
  ASSERT_TRUE(queued->AwaitDone(2));
  EXPECT_EQ(running->done(), 1);
  EXPECT_EQ(queued->done(), 2);
  EXPECT_EQ(running->end().status.code(), absl::StatusCode::kUnavailable);
  for (const auto& probe : probes) EXPECT_EQ(probe->done(), 1);
  EXPECT_EQ(queued->end(0).status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(queued->end(1).status.code(), absl::StatusCode::kUnavailable);
  // After shutdown a request is refused at once.
  auto late = Send("c", 1);
  ASSERT_TRUE(late->AwaitDone());
  EXPECT_EQ(late->end().status.code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace inferd
