#include "frontends/grpc/stream_write_queue.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace inferd {
namespace {

using Queue = StreamWriteQueue<std::string>;

std::unique_ptr<std::string> Message(std::string text = "piece") {
  return std::make_unique<std::string>(std::move(text));
}

// Issue 30: the pieces of a generation whose client did not read were queued without bound
// (a 4 MB request grew the server by 780 MB).
TEST(StreamWriteQueueTest, RefusesPiecesPastTheMessageLimit) {
  Queue queue(StreamWriteLimits{.max_pieces = 3, .max_bytes = 1 << 20});
  queue.RequestRead();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(queue.Push(Message(), 100, /*last=*/false));
  EXPECT_FALSE(queue.Push(Message(), 100, /*last=*/false));
  EXPECT_EQ(queue.size(), 3u);
  EXPECT_EQ(queue.bytes(), 300u);
}

TEST(StreamWriteQueueTest, RefusesPiecesPastTheByteLimit) {
  Queue queue(StreamWriteLimits{.max_pieces = 100, .max_bytes = 250});
  EXPECT_TRUE(queue.Push(Message(), 100, false));
  EXPECT_TRUE(queue.Push(Message(), 100, false));
  EXPECT_FALSE(queue.Push(Message(), 100, false));  // 300 > 250
  EXPECT_TRUE(queue.Push(Message(), 50, false));    // exactly 250
  EXPECT_FALSE(queue.Push(Message(), 1, false));
}

TEST(StreamWriteQueueTest, TakesAnyMessageIntoAnEmptyQueueAndEveryLastResponse) {
  Queue queue(StreamWriteLimits{.max_pieces = 1, .max_bytes = 10});
  // One message alone is bounded by the server's message size, not by the queue.
  EXPECT_TRUE(queue.Push(Message(), 1000, false));
  queue.RequestRead();
  // A request's last response is bounded by how many requests are read, not refused.
  EXPECT_TRUE(queue.Push(Message(), 1000, /*last=*/true));
  EXPECT_EQ(queue.size(), 2u);
  EXPECT_FALSE(queue.Push(Message(), 1, false));
}

TEST(StreamWriteQueueTest, StopsReadingWhileTooManyRequestsWaitForTheirLastResponse) {
  Queue queue(StreamWriteLimits{.max_unanswered = 2});
  EXPECT_TRUE(queue.MayRead());
  queue.RequestRead();
  queue.RequestRead();
  EXPECT_FALSE(queue.MayRead());
  // A piece written answers nothing; a last response written answers its request.
  queue.Push(Message(), 10, false);
  queue.Push(Message(), 10, true);
  queue.PopFront();
  EXPECT_FALSE(queue.MayRead());
  queue.PopFront();
  EXPECT_TRUE(queue.MayRead());
  EXPECT_EQ(queue.unanswered(), 1u);
  // A last response that will never be written (a broken stream) answers it too.
  queue.Answered();
  EXPECT_EQ(queue.unanswered(), 0u);
}

TEST(StreamWriteQueueTest, DroppingKeepsTheMessageBeingWrittenAndFreesTheRest) {
  Queue queue;
  queue.RequestRead();
  queue.RequestRead();
  queue.Push(Message("front"), 5, false);
  queue.Push(Message(), 7, true);
  queue.Push(Message(), 9, true);
  queue.DropQueued(/*keep_front=*/true);
  ASSERT_EQ(queue.size(), 1u);
  EXPECT_EQ(*queue.front(), "front");
  EXPECT_EQ(queue.bytes(), 5u);
  EXPECT_EQ(queue.unanswered(), 0u);
  queue.DropQueued(/*keep_front=*/false);
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(queue.bytes(), 0u);
}

}  // namespace
}  // namespace inferd
