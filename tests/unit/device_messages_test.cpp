// Device messages: the driver's assertion lines, as they reach stderr. DeviceMessageLog::feed must rebuild lines from arbitrary write boundaries, keep only assertion lines, drop
// lines too long to be one, keep the first kMaxMessages, and never block. Tests use their own log where they can:
// device_message_log() is the process's, shared by every test of this binary.
#include "core/device_messages.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace firstassert {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// The line PyTorch's CUDA_KERNEL_ASSERT makes the driver print (it passes __func__: the bare name).
constexpr const char* kTorchLine =
    "../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [3,1,2], thread: "
    "[5,6,7] Assertion `t >= 0 && t < n_classes` failed.";

std::string line_numbered(unsigned n) {
  return "k.cu:" + std::to_string(n) + ": k: block: [0,0,0], thread: [0,0,0] Assertion `x` failed.\n";
}

// A log is ~70 KB: on the heap, not the test's stack.
std::unique_ptr<DeviceMessageLog> new_log() { return std::make_unique<DeviceMessageLog>(); }

void feed(DeviceMessageLog& log, const std::string& bytes) { log.feed(bytes.data(), bytes.size()); }

std::vector<uint32_t> lines_of(const DeviceMessageLog& log) {
  std::vector<uint32_t> out;
  for (const DeviceMessage& m : log.messages()) out.push_back(m.line);
  return out;
}

// What a line may hold is the parser's (device_assert_line_test.cpp); here, what the log does with the lines fed.
TEST(DeviceMessageLog, SeveralRecordsOnOneLineAreEachKept) {
  auto log = new_log();
  feed(*log, std::string(kTorchLine) + " " + line_numbered(3));
  EXPECT_THAT(lines_of(*log), ElementsAre(250, 3));
}

TEST(DeviceMessageLog, OneWholeLine) {
  auto log = new_log();
  EXPECT_EQ(log->count(), 0u);
  feed(*log, std::string(kTorchLine) + "\n");
  ASSERT_EQ(log->count(), 1u);
  std::vector<DeviceMessage> m = log->messages();
  ASSERT_EQ(m.size(), 1u);
  EXPECT_STREQ(m[0].function, "nll_loss_forward_reduce_cuda_kernel_2d");
  EXPECT_GT(m[0].wall_ns, 0) << "the log stamps when the line was seen";
}

TEST(DeviceMessageLog, ALineIsTakenOnlyAtItsNewline) {
  auto log = new_log();
  feed(*log, kTorchLine);
  EXPECT_EQ(log->count(), 0u) << "the line may still go on";
  feed(*log, "\n");
  EXPECT_EQ(log->count(), 1u);
}

// stdio may flush a line in any pieces: byte by byte is the worst case.
TEST(DeviceMessageLog, LinesSplitAcrossCallsAreJoined) {
  auto log = new_log();
  std::string bytes = std::string(kTorchLine) + "\n" + line_numbered(2);
  for (char c : bytes) log->feed(&c, 1);
  EXPECT_THAT(lines_of(*log), ElementsAre(250, 2));
  ASSERT_EQ(log->count(), 2u);
  EXPECT_STREQ(log->messages()[0].condition, "t >= 0 && t < n_classes");
}

TEST(DeviceMessageLog, SeveralLinesInOneCallAndOtherOutputIgnored) {
  auto log = new_log();
  feed(*log,
       "epoch 3: loss 0.25\n" + line_numbered(10) +
           "a.out: a.c:5: main: Assertion `0' failed.\n"  // host assert: not the device's
           "Assertion `but not a device line`\n" +
           line_numbered(11) + "\n\n" + line_numbered(12) + "Traceback (most recent call last):\n");
  EXPECT_THAT(lines_of(*log), ElementsAre(10, 11, 12));
}

TEST(DeviceMessageLog, CrLfLinesAreTaken) {
  auto log = new_log();
  feed(*log, std::string(kTorchLine) + "\r\n" + std::string(kTorchLine) + "\r\n");
  EXPECT_EQ(log->count(), 2u);
}

TEST(DeviceMessageLog, NothingToFeed) {
  auto log = new_log();
  log->feed(nullptr, 10);
  log->feed(kTorchLine, 0);
  EXPECT_EQ(log->count(), 0u);
  feed(*log, "\n");
  EXPECT_EQ(log->count(), 0u);
  EXPECT_THAT(log->messages(), IsEmpty());
}

// An assertion line padded (in its condition) to exactly `size` bytes, newline excluded.
std::string assertion_of_size(size_t size, unsigned line) {
  std::string head = "k.cu:" + std::to_string(line) + ": k: block: [0,0,0], thread: [0,0,0] Assertion `";
  std::string tail = "` failed.";
  return head + std::string(size - head.size() - tail.size(), 'c') + tail;
}

// A line longer than the log's buffer (2048 bytes) cannot be a driver line worth keeping: dropped whole, even when
// it ends like one, and the next line is read normally. A line of exactly the buffer's size still fits.
TEST(DeviceMessageLog, OverlongLinesAreDroppedAndTheNextLineIsRead) {
  auto log = new_log();
  feed(*log, assertion_of_size(2048, 1) + "\n");
  feed(*log, assertion_of_size(2049, 2) + "\n");
  feed(*log, assertion_of_size(10000, 3) + "\n" + line_numbered(4));
  EXPECT_THAT(lines_of(*log), ElementsAre(1, 4));
}

TEST(DeviceMessageLog, OverlongLineSplitAcrossCallsIsDropped) {
  auto log = new_log();
  std::string overlong = assertion_of_size(3000, 1);
  feed(*log, overlong.substr(0, 1500));
  feed(*log, overlong.substr(1500, 1000));
  feed(*log, overlong.substr(2500));
  feed(*log, "\n" + line_numbered(2));
  EXPECT_THAT(lines_of(*log), ElementsAre(2));
}

TEST(DeviceMessageLog, KeepsTheFirstMessagesOnly) {
  auto log = new_log();
  std::string bytes;
  for (unsigned i = 1; i <= DeviceMessageLog::kMaxMessages + 10; ++i) bytes += line_numbered(i);
  feed(*log, bytes);
  feed(*log, line_numbered(1000));
  EXPECT_EQ(log->count(), DeviceMessageLog::kMaxMessages);
  std::vector<uint32_t> lines = lines_of(*log);
  ASSERT_EQ(lines.size(), DeviceMessageLog::kMaxMessages);
  for (unsigned i = 0; i < lines.size(); ++i) EXPECT_EQ(lines[i], i + 1) << "the first ones, in order";
}

// Several threads writing at once: feed() must return every time (it is a try-lock, never a wait), and what is
// kept must be whole lines. How many are kept depends on the interleaving, so only bounds are checked.
TEST(DeviceMessageLog, ConcurrentFeedsNeverBlockAndKeepWholeLines) {
  constexpr unsigned kThreads = 8;
  constexpr unsigned kEach = 200;
  auto log = new_log();
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (unsigned i = 0; i < kEach; ++i) {
        unsigned n = t * 1000 + i;
        std::string line = "t" + std::to_string(t) + ".cu:" + std::to_string(n) + ": k" + std::to_string(t) +
                           ": block: [" + std::to_string(t) + ",0,0], thread: [" + std::to_string(i) +
                           ",0,0] Assertion `x` failed.\n";
        feed(*log, line);  // one whole line per write, as the driver's fprintf makes it
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_GE(log->count(), 1u) << "the first write finds the log free";
  EXPECT_LE(log->count(), DeviceMessageLog::kMaxMessages);
  for (const DeviceMessage& m : log->messages()) {
    unsigned t = m.block[0];
    ASSERT_LT(t, kThreads);
    EXPECT_EQ(std::string(m.file), "t" + std::to_string(t) + ".cu");
    EXPECT_EQ(std::string(m.function), "k" + std::to_string(t));
    EXPECT_EQ(m.line, t * 1000 + m.thread[0]) << "fields of one message come from one line";
  }
}

TEST(DeviceMessageLog, TheProcessLogIsOneObject) {
  DeviceMessageLog& log = device_message_log();
  EXPECT_EQ(&log, &device_message_log());
  size_t before = log.count();  // other tests of this binary do not feed it, but do not rely on that
  feed(log, line_numbered(5));
  EXPECT_EQ(log.count(), std::min(before + 1, DeviceMessageLog::kMaxMessages));
}

}  // namespace
}  // namespace firstassert
