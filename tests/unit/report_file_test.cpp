// ReportFile in a fresh directory per test: the report must land atomically with mode 0644, never through a
// symlink, never over a file another run left, and must leave no temporary file behind.
#include "report/report_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace firstassert {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int kPid = 4242;
constexpr const char* kHost = "node7";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void put(const std::string& path, const std::string& content) { std::ofstream(path, std::ios::binary) << content; }

class ReportFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/firstassert-report-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    target_ = dir_ + "/firstassert-node7-4242.json";
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  std::set<std::string> entries() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.insert(e.path().filename().string());
    return names;
  }

  static mode_t mode(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_mode;
  }

  std::string dir_;
  std::string target_;
};

TEST_F(ReportFileTest, FirstWriteClaimsTheNameWithExactContent) {
  ReportFile report(dir_, kHost, kPid);
  EXPECT_EQ(report.path(), "");
  std::string error;
  const std::string content = "{\"schema\": \"firstassert/1\"}\n";
  ASSERT_TRUE(report.write(content, error)) << error;
  EXPECT_EQ(report.path(), target_);
  EXPECT_EQ(read(target_), content);
  EXPECT_EQ(entries(), std::set<std::string>{"firstassert-node7-4242.json"}) << "no temporary file left";
}

TEST_F(ReportFileTest, ModeIs0644WhateverTheUmask) {
  for (mode_t mask : {mode_t{077}, mode_t{0}, mode_t{0222}}) {
    SCOPED_TRACE(mask);
    std::string sub = dir_ + "/" + std::to_string(mask);
    ASSERT_TRUE(fs::create_directory(sub));
    mode_t old = ::umask(mask);
    ReportFile report(sub, kHost, kPid);
    std::string error;
    bool ok = report.write("x", error);
    ::umask(old);
    ASSERT_TRUE(ok) << error;
    EXPECT_TRUE(S_ISREG(mode(report.path())));
    EXPECT_EQ(mode(report.path()) & 07777, 0644u);
  }
}

TEST_F(ReportFileTest, LaterWritesReplaceOurOwnFile) {
  ReportFile report(dir_, kHost, kPid);
  std::string error;
  ASSERT_TRUE(report.write("first, at detection\n", error)) << error;
  ASSERT_TRUE(report.write("second, longer: the final counts at exit\n", error)) << error;
  ASSERT_TRUE(report.write("third\n", error)) << error;
  EXPECT_EQ(report.path(), target_);
  EXPECT_EQ(read(target_), "third\n");
  EXPECT_EQ(mode(target_) & 07777, 0644u);
  EXPECT_EQ(entries(), std::set<std::string>{"firstassert-node7-4242.json"});
}

TEST_F(ReportFileTest, AnotherRunsFileIsNotOverwritten) {
  put(target_, "another run with the same pid\n");
  ReportFile report(dir_, kHost, kPid);
  std::string error;
  ASSERT_TRUE(report.write("ours\n", error)) << error;
  EXPECT_EQ(report.path(), dir_ + "/firstassert-node7-4242.1.json");
  EXPECT_EQ(read(target_), "another run with the same pid\n");
  EXPECT_EQ(read(report.path()), "ours\n");

  // Later writes go to the name we claimed, not back to the first one.
  ASSERT_TRUE(report.write("ours, final\n", error)) << error;
  EXPECT_EQ(read(target_), "another run with the same pid\n");
  EXPECT_EQ(read(dir_ + "/firstassert-node7-4242.1.json"), "ours, final\n");
  EXPECT_EQ(entries().size(), 2u);
}

TEST_F(ReportFileTest, TakenNamesAreSkippedInOrder) {
  put(target_, "a");
  put(dir_ + "/firstassert-node7-4242.1.json", "b");
  ReportFile report(dir_, kHost, kPid);
  std::string error;
  ASSERT_TRUE(report.write("c", error)) << error;
  EXPECT_EQ(report.path(), dir_ + "/firstassert-node7-4242.2.json");
  EXPECT_EQ(read(target_), "a");
  EXPECT_EQ(read(dir_ + "/firstassert-node7-4242.1.json"), "b");
}

TEST_F(ReportFileTest, PlantedSymlinkIsNotFollowed) {
  std::string victim = dir_ + "/victim";
  put(victim, "precious\n");
  ASSERT_EQ(::symlink(victim.c_str(), target_.c_str()), 0);
  ReportFile report(dir_, kHost, kPid);
  std::string error;
  ASSERT_TRUE(report.write("report\n", error)) << error;
  EXPECT_EQ(read(victim), "precious\n");
  EXPECT_TRUE(fs::is_symlink(target_)) << "the link itself is someone else's: left alone";
  EXPECT_NE(report.path(), target_);
  EXPECT_EQ(read(report.path()), "report\n");
  EXPECT_TRUE(S_ISREG(mode(report.path())));
}

TEST_F(ReportFileTest, DanglingSymlinkIsNotFollowed) {
  std::string missing = dir_ + "/would-be-created";
  ASSERT_EQ(::symlink(missing.c_str(), target_.c_str()), 0);
  ReportFile report(dir_, kHost, kPid);
  std::string error;
  ASSERT_TRUE(report.write("report\n", error)) << error;
  EXPECT_FALSE(fs::exists(missing));
  EXPECT_NE(report.path(), target_);
}

// Between two writes someone swaps our report for a link: the rewrite must replace the link, not write through it.
TEST_F(ReportFileTest, SymlinkPlantedOverOurFileIsReplacedNotFollowed) {
  ReportFile report(dir_, kHost, kPid);
  std::string error;
  ASSERT_TRUE(report.write("first\n", error)) << error;
  std::string victim = dir_ + "/victim";
  put(victim, "precious\n");
  ASSERT_EQ(::unlink(target_.c_str()), 0);
  ASSERT_EQ(::symlink(victim.c_str(), target_.c_str()), 0);
  ASSERT_TRUE(report.write("second\n", error)) << error;
  EXPECT_EQ(read(victim), "precious\n");
  EXPECT_FALSE(fs::is_symlink(target_));
  EXPECT_EQ(read(target_), "second\n");
}

TEST_F(ReportFileTest, SymlinkAtTheTemporaryNameIsNotFollowed) {
  std::string victim = dir_ + "/victim";
  put(victim, "precious\n");
  // Plant links at the likely temporary names as well as the target.
  for (int i = 0; i < 3; ++i) {
    std::string temp = dir_ + "/.firstassert-node7-4242.tmp" + std::to_string(i);
    ASSERT_EQ(::symlink(victim.c_str(), temp.c_str()), 0);
  }
  ReportFile report(dir_, kHost, kPid);
  std::string error;
  ASSERT_TRUE(report.write("report\n", error)) << error;
  EXPECT_EQ(read(victim), "precious\n");
  EXPECT_EQ(read(report.path()), "report\n");
}

TEST_F(ReportFileTest, NonexistentDirectoryFailsWithOneLineAndCreatesNothing) {
  std::string missing = dir_ + "/no/such/dir";
  ReportFile report(missing, kHost, kPid);
  std::string error;
  EXPECT_FALSE(report.write("report\n", error));
  EXPECT_FALSE(error.empty());
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_THAT(error, HasSubstr(missing));
  EXPECT_EQ(report.path(), "");
  EXPECT_FALSE(fs::exists(dir_ + "/no"));
  EXPECT_TRUE(entries().empty());
}

TEST_F(ReportFileTest, FileInsteadOfDirectoryFails) {
  std::string file = dir_ + "/file";
  put(file, "x");
  ReportFile report(file, kHost, kPid);
  std::string error;
  EXPECT_FALSE(report.write("report\n", error));
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_EQ(read(file), "x");
  EXPECT_EQ(entries(), std::set<std::string>{"file"});
}

TEST_F(ReportFileTest, EveryNameTakenFailsAndLeavesNothing) {
  for (int n = 0; n < 100; ++n) put(dir_ + "/firstassert-node7-4242" + (n == 0 ? "" : "." + std::to_string(n)) + ".json", "x");
  ReportFile report(dir_, kHost, kPid);
  std::string error;
  EXPECT_FALSE(report.write("report\n", error));
  EXPECT_FALSE(error.empty());
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_EQ(entries().size(), 100u) << "the temporary file must be removed";
}

TEST_F(ReportFileTest, HostNameCannotEscapeTheDirectory) {
  ReportFile report(dir_, "../../evil/host name", kPid);
  std::string error;
  ASSERT_TRUE(report.write("x", error)) << error;
  EXPECT_EQ(fs::path(report.path()).parent_path(), fs::path(dir_));
  EXPECT_EQ(entries().size(), 1u);
  EXPECT_EQ(report.path().find(' '), std::string::npos);
}

TEST_F(ReportFileTest, EmptyContentIsWritten) {
  ReportFile report(dir_, kHost, kPid);
  std::string error;
  ASSERT_TRUE(report.write("", error)) << error;
  EXPECT_EQ(read(report.path()), "");
}

}  // namespace
}  // namespace firstassert
