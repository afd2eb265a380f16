// The pool of Python stacks kept for good (src/stack/python_stack_pool.h).
#include "stack/python_stack_pool.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace firstassert {
namespace {

std::vector<PythonFrame> stack_of(int line, size_t depth) {
  std::vector<PythonFrame> frames;
  for (size_t i = 0; i < depth; ++i) frames.push_back({"model.py", "forward", line + static_cast<int>(i)});
  return frames;
}

TEST(PythonStackPool, TheSameStackIsKeptOnceAndAnotherLineIsAnotherStack) {
  std::vector<PythonFrame> a = stack_of(100, 12);
  const PythonFrame* kept = lasting_python_frames(a.data(), a.size());
  ASSERT_NE(kept, nullptr);
  EXPECT_NE(kept, a.data());
  EXPECT_EQ(lasting_python_frames(stack_of(100, 12).data(), 12), kept);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(kept[i].file, a[i].file);
    EXPECT_EQ(kept[i].function, a[i].function);
    EXPECT_EQ(kept[i].line, a[i].line);
  }
  std::vector<PythonFrame> b = a;
  b[11].line = 7;  // the outermost frame called from elsewhere
  const PythonFrame* other = lasting_python_frames(b.data(), b.size());
  ASSERT_NE(other, nullptr);
  EXPECT_NE(other, kept);
  EXPECT_EQ(other[11].line, 7);
  EXPECT_EQ(kept[11].line, 111);  // the first copy is never changed
  EXPECT_NE(lasting_python_frames(a.data(), 11), kept);  // a shorter stack is another one
}

TEST(PythonStackPool, NoFramesAreNotKept) { EXPECT_EQ(lasting_python_frames(nullptr, 0), nullptr); }

TEST(PythonStackPool, ThreadsKeepingTheSameStacksGetTheSameCopies) {
  constexpr int kThreads = 4, kStacks = 64;
  std::vector<std::vector<const PythonFrame*>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&got, t] {
      for (int s = 0; s < kStacks; ++s) got[t].push_back(lasting_python_frames(stack_of(5000 + 100 * s, 8).data(), 8));
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int s = 0; s < kStacks; ++s) {
    ASSERT_NE(got[0][s], nullptr) << s;
    for (int t = 1; t < kThreads; ++t) EXPECT_EQ(got[t][s], got[0][s]) << t << " " << s;
  }
}

// Bounded: once full, a new stack is not kept (the caller keeps its copy), and what was kept stays found.
// Runs last in this binary: it fills the pool.
TEST(PythonStackPool, ZFullPoolKeepsNoMoreAndStillFindsWhatItKept) {
  std::vector<PythonFrame> first = stack_of(900000, 32);
  const PythonFrame* kept = lasting_python_frames(first.data(), first.size());
  ASSERT_NE(kept, nullptr);
  size_t refused = 0;
  for (int s = 0; s < 20000 && refused == 0; ++s) {
    if (lasting_python_frames(stack_of(1000000 + 100 * s, 32).data(), 32) == nullptr) ++refused;
  }
  EXPECT_EQ(refused, 1u) << "64 Ki frames hold at most 2,048 stacks of 32";
  EXPECT_EQ(lasting_python_frames(first.data(), first.size()), kept);
}

}  // namespace
}  // namespace firstassert
