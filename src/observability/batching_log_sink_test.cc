#include "observability/batching_log_sink.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>

namespace inferd {
namespace {

using std::chrono::milliseconds;

// Keeps what it is given, formatted with a bare "%v" pattern; readable while the writer
// thread writes.
class RecordingSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  RecordingSink() { set_pattern("%v"); }
  std::string Written() {
    std::lock_guard<std::mutex> lock(mutex_);
    return written_;
  }

 private:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    written_.append(line.data(), line.size());
  }
  void flush_() override {}

  std::string written_;
};

// A logger over a BatchingLogSink that writes to a RecordingSink.
struct Fixture {
  explicit Fixture(size_t max_lines, milliseconds interval)
      : target(std::make_shared<RecordingSink>()) {
    sink = std::make_shared<BatchingLogSink>(std::vector<spdlog::sink_ptr>{target}, max_lines,
                                             interval);
    logger = std::make_shared<spdlog::logger>("access", sink);
  }
  std::string Written() { return target->Written(); }

  std::shared_ptr<RecordingSink> target;
  std::shared_ptr<BatchingLogSink> sink;
  std::shared_ptr<spdlog::logger> logger;
};

TEST(BatchingLogSinkTest, LinesWaitForTheIntervalThenAreWrittenTogetherInOrder) {
  Fixture f(/*max_lines=*/100, milliseconds(300));
  f.logger->info("first");
  f.logger->info("second");
  // Within the interval nothing is written: the request thread did not wait on the output.
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(f.Written(), "");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (f.Written().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(f.Written(), "first\nsecond\n");
}

TEST(BatchingLogSinkTest, FlushWritesWhatIsWaitingAtOnce) {
  Fixture f(/*max_lines=*/100, std::chrono::hours(1));
  f.logger->info("one");
  f.logger->flush();
  EXPECT_EQ(f.Written(), "one\n");
  f.logger->info("two");
  f.logger->flush();
  EXPECT_EQ(f.Written(), "one\ntwo\n");
}

TEST(BatchingLogSinkTest, LinesPastTheLimitAreDroppedAndCounted) {
  Fixture f(/*max_lines=*/3, std::chrono::hours(1));
  for (int i = 0; i < 5; ++i) f.logger->info("line {}", i);
  EXPECT_EQ(f.sink->dropped(), 2u);
  f.logger->flush();
  EXPECT_EQ(f.Written(), "line 0\nline 1\nline 2\n");
  f.logger->info("after");  // room again once written
  f.logger->flush();
  EXPECT_EQ(f.Written(), "line 0\nline 1\nline 2\nafter\n");
}

TEST(BatchingLogSinkTest, DestroyingTheSinkWritesWhatIsWaiting) {
  auto target = std::make_shared<RecordingSink>();
  {
    auto sink = std::make_shared<BatchingLogSink>(std::vector<spdlog::sink_ptr>{target}, 100,
                                                  std::chrono::hours(1));
    spdlog::logger logger("access", sink);
    logger.info("queued at exit");
  }  // the writer was in its hour-long wait: stopping cuts it short
  EXPECT_EQ(target->Written(), "queued at exit\n");
}

TEST(BatchingLogSinkTest, TheTargetsKeepTheirOwnLevel) {
  Fixture f(/*max_lines=*/100, std::chrono::hours(1));
  f.target->set_level(spdlog::level::warn);
  f.logger->info("quiet");
  f.logger->warn("loud");
  f.logger->flush();
  EXPECT_EQ(f.Written(), "loud\n");
}

}  // namespace
}  // namespace inferd
