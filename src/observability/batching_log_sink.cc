#include "observability/batching_log_sink.h"

#include <utility>

#include <pthread.h>

namespace inferd {

BatchingLogSink::BatchingLogSink(std::vector<spdlog::sink_ptr> targets, size_t max_lines,
                                 std::chrono::milliseconds interval)
    : targets_(std::move(targets)), max_lines_(max_lines), interval_(interval) {
  writer_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "log-writer");
    RunWriter();
  });
}

BatchingLogSink::~BatchingLogSink() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  changed_.NotifyAll();
  writer_.join();
  WriteWaiting();  // lines logged while the writer was stopping
}

void BatchingLogSink::log(const spdlog::details::log_msg& msg) {
  bool wake = false;
  {
    MutexLock lock(&mu_);
    if (waiting_.size() >= max_lines_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    waiting_.emplace_back(msg);
    wake = writer_idle_ && waiting_.size() == 1;
  }
  if (wake) changed_.NotifyOne();
}

void BatchingLogSink::flush() {
  WriteWaiting();
  for (const spdlog::sink_ptr& target : targets_) target->flush();
}

void BatchingLogSink::RunWriter() {
  for (;;) {
    {
      MutexLock lock(&mu_);
      writer_idle_ = true;
      changed_.Wait(&mu_, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !waiting_.empty();
      });
      writer_idle_ = false;
      if (stopping_) return;
      // Let the interval's other lines join this batch; stopping cuts the wait short.
      changed_.WaitUntil(&mu_, std::chrono::steady_clock::now() + interval_,
                         [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; });
    }
    WriteWaiting();
  }
}

void BatchingLogSink::WriteWaiting() {
  MutexLock write_lock(&write_mu_);
  {
    MutexLock lock(&mu_);
    std::swap(waiting_, writing_);
  }
  for (const spdlog::details::log_msg_buffer& line : writing_) {
    for (const spdlog::sink_ptr& target : targets_) {
      if (target->should_log(line.level)) target->log(line);
    }
  }
  writing_.clear();
}

}  // namespace inferd
