// Device messages: the driver's assertion lines, parsed from whatever reaches stderr. parse_device_assert must take
// every real line (paths with colons, signatures, carriage returns) and refuse everything else without touching its
// output; DeviceMessageLog::feed must rebuild lines from arbitrary write boundaries, keep only assertion lines, drop
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

TEST(ParseDeviceAssert, TakesEveryFieldOfTheDriversLine) {
  DeviceMessage m;
  ASSERT_TRUE(parse_device_assert(kTorchLine, m));
  EXPECT_STREQ(m.file, "../aten/src/ATen/native/cuda/Loss.cu");
  EXPECT_EQ(m.line, 250u);
  EXPECT_STREQ(m.function, "nll_loss_forward_reduce_cuda_kernel_2d");
  EXPECT_THAT(m.block, ElementsAre(3, 1, 2));
  EXPECT_THAT(m.thread, ElementsAre(5, 6, 7));
  EXPECT_STREQ(m.condition, "t >= 0 && t < n_classes");
  EXPECT_EQ(m.wall_ns, 0) << "parsing does not stamp a time; the log does";
}

// A plain assert() in CUDA C++ on Linux passes __PRETTY_FUNCTION__: the function is a whole signature, with spaces,
// and for a template a "[with ...]" tail. It holds no ": ", so it is still one field.
TEST(ParseDeviceAssert, FunctionMayBeAWholeSignature) {
  DeviceMessage m;
  ASSERT_TRUE(parse_device_assert(
      "/src/a.cu:12: void scale<T>(T *, int) [with T = float]: block: [0,0,0], thread: [31,0,0] Assertion "
      "`n > 0` failed.",
      m));
  EXPECT_STREQ(m.file, "/src/a.cu");
  EXPECT_EQ(m.line, 12u);
  EXPECT_STREQ(m.function, "void scale<T>(T *, int) [with T = float]");
  EXPECT_EQ(m.thread[0], 31u);
  EXPECT_STREQ(m.condition, "n > 0");
}

TEST(ParseDeviceAssert, FileMayHoldColonsAndSpaces) {
  DeviceMessage m;
  ASSERT_TRUE(parse_device_assert(
      "C:\\work dir: v2\\k.cu:7: check: block: [0,0,0], thread: [0,0,0] Assertion `a::b(x) == 1` failed.", m));
  EXPECT_STREQ(m.file, "C:\\work dir: v2\\k.cu");
  EXPECT_EQ(m.line, 7u);
  EXPECT_STREQ(m.function, "check");
  EXPECT_STREQ(m.condition, "a::b(x) == 1") << "the condition is taken whole, colons and all";
}

TEST(ParseDeviceAssert, ConditionMayHoldBackticksAndBrackets) {
  DeviceMessage m;
  ASSERT_TRUE(parse_device_assert(
      "k.cu:1: k: block: [0,0,0], thread: [0,0,0] Assertion `a[i] == '`' && s == \"] Assertion `\"` failed.", m));
  EXPECT_STREQ(m.condition, "a[i] == '`' && s == \"] Assertion `\"");
}

TEST(ParseDeviceAssert, CarriageReturnAndTrailingSpacesAreIgnored) {
  DeviceMessage m;
  ASSERT_TRUE(parse_device_assert(std::string(kTorchLine) + " \r", m));
  EXPECT_STREQ(m.condition, "t >= 0 && t < n_classes");
}

TEST(ParseDeviceAssert, NumbersUpToUint32MaxAreTaken) {
  DeviceMessage m;
  ASSERT_TRUE(parse_device_assert(
      "k.cu:4294967295: k: block: [4294967295,0,1], thread: [1023,1,0] Assertion `x` failed.", m));
  EXPECT_EQ(m.line, 4294967295u);
  EXPECT_EQ(m.block[0], 4294967295u);
}

TEST(ParseDeviceAssert, RefusesWhatIsNotADeviceAssertionAndLeavesTheOutputAlone) {
  const char* not_device_asserts[] = {
      "",
      "Assertion `x` failed.",
      // glibc's host assert: quotes differ and there is no block or thread.
      "a.out: a.c:5: main: Assertion `0' failed.",
      "k.cu:12: k: block: [0,0,0], thread: [0,0,0] Assertion `x` failed",   // no final period
      "k.cu:12: k: block: [0,0,0], thread: [0,0,0] Assertion `x` failed. trailing",
      "k.cu:x2: k: block: [0,0,0], thread: [0,0,0] Assertion `x` failed.",  // line not a number
      "k.cu:: k: block: [0,0,0], thread: [0,0,0] Assertion `x` failed.",    // empty line number
      "k.cu:4294967296: k: block: [0,0,0], thread: [0,0,0] Assertion `x` failed.",  // over 32 bits
      "k.cu:12: k: block: [0,0], thread: [0,0,0] Assertion `x` failed.",    // two coordinates
      "k.cu:12: k: block: [0,0,0,0], thread: [0,0,0] Assertion `x` failed.",  // four
      "k.cu:12: k: block: [0,0,0], thread: [0,-1,0] Assertion `x` failed.",   // negative
      "k.cu:12: k: block: [0, 0,0], thread: [0,0,0] Assertion `x` failed.",   // not the driver's spacing
      "k.cu:12: k: block: [0,0,0] Assertion `x` failed.",                     // no thread
      "k.cu:12: k: block: [0,0,0] Assertion `x` failed., thread: [0,0,0] Assertion `y` failed.",
      "k.cu12 k: block: [0,0,0], thread: [0,0,0] Assertion `x` failed.",      // no "file:line: function"
      "k.cu: block: [0,0,0], thread: [0,0,0] Assertion `x` failed.",          // no line number
  };
  for (const char* line : not_device_asserts) {
    DeviceMessage m;
    m.line = 77;
    std::strcpy(m.function, "untouched");
    EXPECT_FALSE(parse_device_assert(line, m)) << line;
    EXPECT_EQ(m.line, 77u) << "a refused line must not half-write the output: " << line;
    EXPECT_STREQ(m.function, "untouched") << line;
  }
}

TEST(ParseDeviceAssert, LongFieldsAreCutAndTerminated) {
  std::string file(400, 'f');
  std::string function(400, 'g');
  std::string condition(900, 'c');
  DeviceMessage m;
  ASSERT_TRUE(parse_device_assert(file + ":9: " + function + ": block: [0,0,0], thread: [0,0,0] Assertion `" +
                                      condition + "` failed.",
                                  m));
  EXPECT_EQ(std::string(m.file), file.substr(0, sizeof m.file - 1));
  EXPECT_EQ(std::string(m.function), function.substr(0, sizeof m.function - 1));
  EXPECT_EQ(std::string(m.condition), condition.substr(0, sizeof m.condition - 1));
  EXPECT_EQ(m.line, 9u);
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
