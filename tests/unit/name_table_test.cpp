// NameTable: launches hand over names the driver owns; the table must give back copies that stay right after the
// driver's buffer changes, and must degrade to a placeholder, never a crash, when it is full.
#include "core/name_table.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace firstassert {
namespace {

TEST(NameTable, NullStaysNull) {
  NameTable table(16);
  EXPECT_EQ(table.intern(nullptr), nullptr);
  EXPECT_EQ(table.size(), 0u);
}

TEST(NameTable, SamePointerGivesTheSameCopy) {
  NameTable table(16);
  const char* driver_name = "_Z6kernelPi";
  const char* first = table.intern(driver_name);
  ASSERT_NE(first, nullptr);
  EXPECT_NE(first, driver_name) << "a copy, not the driver's pointer";
  EXPECT_STREQ(first, driver_name);
  EXPECT_EQ(table.intern(driver_name), first);
  EXPECT_EQ(table.intern(driver_name), first);
  EXPECT_EQ(table.size(), 1u);
}

TEST(NameTable, CopySurvivesTheDriverBufferBeingOverwritten) {
  NameTable table(16);
  char buffer[64];
  std::strcpy(buffer, "_Z14first_kernelPfS_i");
  const char* copy = table.intern(buffer);
  ASSERT_NE(copy, nullptr);

  // The module is unloaded and the memory reused, for garbage or for another kernel's name.
  std::memset(buffer, 'x', sizeof buffer - 1);
  buffer[sizeof buffer - 1] = '\0';
  EXPECT_STREQ(copy, "_Z14first_kernelPfS_i");

  std::strcpy(buffer, "_Z6secondv");
  const char* second = table.intern(buffer);
  EXPECT_STREQ(second, "_Z6secondv") << "a reused pointer must not answer with the old name";
  EXPECT_STREQ(copy, "_Z14first_kernelPfS_i") << "copies handed out earlier stay valid";
}

// Triton names share long prefixes (all pointwise kernels start "triton_poi_fused_"), so a reused pointer must be
// told apart by the whole name, not only its first bytes.
TEST(NameTable, ReusedPointerWithACommonPrefixGetsTheNewName) {
  NameTable table(16);
  char buffer[64];
  std::strcpy(buffer, "triton_poi_fused_add_0");
  const char* first = table.intern(buffer);
  EXPECT_STREQ(first, "triton_poi_fused_add_0");
  std::strcpy(buffer, "triton_poi_fused_mul_1");
  EXPECT_STREQ(table.intern(buffer), "triton_poi_fused_mul_1");
  EXPECT_STREQ(first, "triton_poi_fused_add_0");
}

TEST(NameTable, DifferentPointersWithTheSameTextAreBothFine) {
  NameTable table(16);
  std::string a = "_Z6kernelPi";
  std::string b = "_Z6kernelPi";
  ASSERT_NE(a.c_str(), b.c_str());
  const char* ca = table.intern(a.c_str());
  const char* cb = table.intern(b.c_str());
  EXPECT_STREQ(ca, "_Z6kernelPi");
  EXPECT_STREQ(cb, "_Z6kernelPi");
  EXPECT_EQ(table.intern(a.c_str()), ca);
  EXPECT_EQ(table.intern(b.c_str()), cb);
}

TEST(NameTable, LongNamesAreCopiedWhole) {
  NameTable table(16);
  std::string name = "_ZN2at6native" + std::string(5000, 'q') + "Ev";
  const char* copy = table.intern(name.c_str());
  EXPECT_EQ(std::string(copy), name);
}

// A table of 8 slots keeps one free (so that every probe ends): the first 7 names are copied, every later one gets
// the placeholder.
TEST(NameTable, FullTableGivesThePlaceholderAndKeepsWhatItHas) {
  NameTable table(8);
  std::vector<std::string> names;
  for (int i = 0; i < 100; ++i) names.push_back("_Z7kernel" + std::to_string(i) + "v");
  std::vector<const char*> copies;
  for (size_t i = 0; i < names.size(); ++i) {
    const char* c = table.intern(names[i].c_str());
    if (i < 7) {
      EXPECT_STREQ(c, names[i].c_str());
    } else {
      EXPECT_EQ(c, NameTable::kTableFull) << names[i];
    }
    copies.push_back(c);
  }
  EXPECT_EQ(table.size(), 7u);
  // Lookups of names already in, and of new names, keep working once full.
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(table.intern(names[i].c_str()), copies[i]) << names[i];
  }
  EXPECT_STREQ(NameTable::kTableFull, "<kernel name table full>");
}

// A capacity is rounded up to a power of two, one slot of which stays free: 0 and 1 hold no name, 2 holds one.
TEST(NameTable, TinyTablesDoNotCrash) {
  struct Case {
    size_t capacity;
    bool keeps_a, keeps_b;
  };
  for (Case c : {Case{0, false, false}, Case{1, false, false}, Case{2, true, false}}) {
    SCOPED_TRACE("capacity " + std::to_string(c.capacity));
    NameTable table(c.capacity);
    std::string a = "_Z1av", b = "_Z1bv";
    for (int i = 0; i < 3; ++i) {
      const char* ca = table.intern(a.c_str());
      const char* cb = table.intern(b.c_str());
      if (c.keeps_a) {
        EXPECT_STREQ(ca, "_Z1av");
      } else {
        EXPECT_EQ(ca, NameTable::kTableFull);
      }
      if (c.keeps_b) {
        EXPECT_STREQ(cb, "_Z1bv");
      } else {
        EXPECT_EQ(cb, NameTable::kTableFull);
      }
    }
    EXPECT_EQ(table.size(), c.keeps_a + c.keeps_b);
  }
}

// Many threads launching the same kernels at once: one copy per pointer, every thread agrees on it.
TEST(NameTable, ConcurrentInterningAgreesOnOneCopyPerPointer) {
  constexpr int kThreads = 8;
  constexpr int kNames = 500;
  NameTable table(4096);
  std::vector<std::string> names;
  for (int i = 0; i < kNames; ++i) names.push_back("_ZN4test6kernelILi" + std::to_string(i) + "EEvPf");

  std::vector<std::vector<const char*>> seen(kThreads, std::vector<const char*>(kNames));
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      for (int round = 0; round < 20; ++round) {
        for (int k = 0; k < kNames; ++k) {
          int i = (k * 7 + t * 31) % kNames;  // different orders per thread
          const char* c = table.intern(names[i].c_str());
          if (round == 0) seen[t][i] = c;
          else if (seen[t][i] != c) seen[t][i] = nullptr;  // flag a copy that changed
        }
      }
    });
  }
  go = true;
  for (std::thread& t : threads) t.join();

  EXPECT_EQ(table.size(), static_cast<size_t>(kNames));
  for (int i = 0; i < kNames; ++i) {
    ASSERT_NE(seen[0][i], nullptr) << names[i];
    EXPECT_STREQ(seen[0][i], names[i].c_str());
    for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t][i], seen[0][i]) << names[i] << " thread " << t;
  }
}

}  // namespace
}  // namespace firstassert
