// A POSIX shared-memory object for tests, as a client of the shared-memory extension would
// create it: a unique key, a size, bytes written and read back; unlinked when destroyed.
#ifndef INFERD_SHM_TESTING_SHM_OBJECT_H_
#define INFERD_SHM_TESTING_SHM_OBJECT_H_

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace inferd::testing {

class ShmObject {
 public:
  explicit ShmObject(size_t size) : key_(UniqueKey()) {
    fd_ = shm_open(key_.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    EXPECT_GE(fd_, 0) << "shm_open " << key_ << ": " << std::strerror(errno);
    Resize(size);
  }
  ~ShmObject() {
    if (fd_ >= 0) close(fd_);
    shm_unlink(key_.c_str());
  }
  ShmObject(const ShmObject&) = delete;
  ShmObject& operator=(const ShmObject&) = delete;

  const std::string& key() const { return key_; }

  void Resize(size_t size) { EXPECT_EQ(ftruncate(fd_, static_cast<off_t>(size)), 0); }

  void Write(size_t offset, const void* data, size_t size) {
    EXPECT_EQ(pwrite(fd_, data, size, static_cast<off_t>(offset)), static_cast<ssize_t>(size));
  }
  template <typename T>
  void WriteValues(size_t offset, const std::vector<T>& values) {
    Write(offset, values.data(), values.size() * sizeof(T));
  }
  template <typename T>
  std::vector<T> ReadValues(size_t offset, size_t count) const {
    std::vector<T> values(count);
    EXPECT_EQ(pread(fd_, values.data(), count * sizeof(T), static_cast<off_t>(offset)),
              static_cast<ssize_t>(count * sizeof(T)));
    return values;
  }

 private:
  static std::string UniqueKey() {
    static std::atomic<int> next{0};
    return "/inferd_test_" + std::to_string(getpid()) + "_" + std::to_string(next++);
  }

  std::string key_;
  int fd_ = -1;
};

}  // namespace inferd::testing

#endif  // INFERD_SHM_TESTING_SHM_OBJECT_H_
