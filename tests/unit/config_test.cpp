// parse_config: every FIRSTASSERT_* variable, good and bad. A bad value must never stop the shim: it must give exactly
// one bounded, single-line warning that names the variable and the default used, and leave that default in place.
#include "core/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace firstassert {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

struct Parsed {
  Config config;
  std::vector<std::string> warnings;
};

Parsed parse(const std::map<std::string, std::string>& env) {
  Parsed p;
  p.config = parse_config(
      [&env](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      p.warnings);
  return p;
}

// A warning a person can read in one line of stderr, whatever the value was.
void expect_one_line(const std::string& warning) {
  EXPECT_LT(warning.size(), 300u) << warning;
  for (char c : warning) {
    EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        << "control character " << static_cast<int>(c) << " in: " << warning;
  }
}

void expect_defaults(const Config& c) {
  Config d;
  EXPECT_EQ(c.report_dir, d.report_dir);
  EXPECT_EQ(c.ring, Config::kDefaultRing);
  EXPECT_EQ(c.cupti_path, d.cupti_path);
  EXPECT_EQ(c.log, LogLevel::quiet);
  EXPECT_EQ(c.sync.kind, SyncMode::Kind::off);
  EXPECT_EQ(c.sync.kernel_regex, "");
  EXPECT_EQ(c.stack_depth, Config::kDefaultStackDepth);
  EXPECT_TRUE(c.python);
  EXPECT_TRUE(c.breadcrumbs);
}

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/firstassert-config-XXXXXX";
    char* made = ::mkdtemp(pattern);
    if (made != nullptr) path_ = made;
  }
  ~TempDir() {
    if (path_.empty()) return;
    ::chmod(path_.c_str(), 0700);
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(Config, NothingSetGivesDefaultsAndNoWarnings) {
  Parsed p = parse({});
  EXPECT_THAT(p.warnings, IsEmpty());
  expect_defaults(p.config);
  EXPECT_EQ(Config::kDefaultRing, 4096u);
  EXPECT_EQ(Config::kDefaultStackDepth, 32u);
}

// Each bad value: exactly one warning, naming the variable and the default, and the default in the Config.
struct BadValue {
  const char* variable;
  const char* value;
  const char* default_shown;  // what the warning must say is used instead
};

TEST(Config, EachBadValueGivesOneWarningAndTheDefault) {
  const std::string huge = "99999999999999999999999999";
  const BadValue cases[] = {
      {"FIRSTASSERT_RING", "lots", "4096"},
      {"FIRSTASSERT_RING", "-1", "4096"},
      {"FIRSTASSERT_RING", "", "4096"},
      {"FIRSTASSERT_RING", "15", "4096"},
      {"FIRSTASSERT_RING", "65537", "4096"},
      {"FIRSTASSERT_RING", "0", "4096"},
      {"FIRSTASSERT_RING", "12k", "4096"},
      {"FIRSTASSERT_RING", " 64", "4096"},
      {"FIRSTASSERT_RING", huge.c_str(), "4096"},
      {"FIRSTASSERT_STACK_DEPTH", "deep", "32"},
      {"FIRSTASSERT_STACK_DEPTH", "-3", "32"},
      {"FIRSTASSERT_STACK_DEPTH", "", "32"},
      {"FIRSTASSERT_STACK_DEPTH", "65", "32"},
      {"FIRSTASSERT_STACK_DEPTH", huge.c_str(), "32"},
      {"FIRSTASSERT_SYNC", "sometimes", "off"},
      {"FIRSTASSERT_SYNC", "", "off"},
      {"FIRSTASSERT_SYNC", "-1", "off"},
      {"FIRSTASSERT_SYNC", "every:0", "off"},
      {"FIRSTASSERT_SYNC", "every:", "off"},
      {"FIRSTASSERT_SYNC", "every:-5", "off"},
      {"FIRSTASSERT_SYNC", "every:x", "off"},
      {"FIRSTASSERT_SYNC", "every:99999999999999999999999999", "off"},
      {"FIRSTASSERT_SYNC", "kernel:", "off"},
      {"FIRSTASSERT_SYNC", "kernel:(", "off"},
      {"FIRSTASSERT_SYNC", "kernel:[a-", "off"},
      {"FIRSTASSERT_LOG", "verbose", "quiet"},
      {"FIRSTASSERT_LOG", "", "quiet"},
      {"FIRSTASSERT_LOG", "-1", "quiet"},
      {"FIRSTASSERT_LOG", huge.c_str(), "quiet"},
      {"FIRSTASSERT_PYTHON", "maybe", "1"},
      {"FIRSTASSERT_PYTHON", "", "1"},
      {"FIRSTASSERT_PYTHON", "-1", "1"},
      {"FIRSTASSERT_PYTHON", "2", "1"},
      {"FIRSTASSERT_BREADCRUMBS", "maybe", "1"},
      {"FIRSTASSERT_BREADCRUMBS", "", "1"},
      {"FIRSTASSERT_BREADCRUMBS", huge.c_str(), "1"},
      {"FIRSTASSERT_CUPTI", "", "the usual search"},
      {"FIRSTASSERT_DIR", "", "the working directory"},
  };
  for (const BadValue& bad : cases) {
    SCOPED_TRACE(std::string(bad.variable) + "=\"" + bad.value + "\"");
    Parsed p = parse({{bad.variable, bad.value}});
    ASSERT_THAT(p.warnings, SizeIs(1));
    const std::string& w = p.warnings[0];
    EXPECT_THAT(w, HasSubstr(bad.variable));
    EXPECT_THAT(w, HasSubstr(std::string("using ") + bad.default_shown));
    // The value is quoted so that an empty one is visible as "".
    EXPECT_THAT(w, HasSubstr("\"" + std::string(bad.value).substr(0, 20)));
    expect_one_line(w);
    expect_defaults(p.config);
  }
}

TEST(Config, SeveralBadValuesGiveOneWarningEach) {
  Parsed p = parse({{"FIRSTASSERT_RING", "x"}, {"FIRSTASSERT_SYNC", "x"}, {"FIRSTASSERT_LOG", "x"},
                    {"FIRSTASSERT_STACK_DEPTH", "x"}, {"FIRSTASSERT_PYTHON", "x"}, {"FIRSTASSERT_BREADCRUMBS", "x"}});
  EXPECT_THAT(p.warnings, SizeIs(6));
  expect_defaults(p.config);
}

TEST(Config, RingBoundsAreInclusive) {
  for (auto [text, value] : {std::pair{"16", 16u}, {"65536", 65536u}, {"1024", 1024u}}) {
    Parsed p = parse({{"FIRSTASSERT_RING", text}});
    EXPECT_THAT(p.warnings, IsEmpty()) << text;
    EXPECT_EQ(p.config.ring, value);
  }
}

TEST(Config, StackDepthBoundsAreInclusive) {
  for (auto [text, value] : {std::pair{"0", 0u}, {"64", 64u}, {"7", 7u}}) {
    Parsed p = parse({{"FIRSTASSERT_STACK_DEPTH", text}});
    EXPECT_THAT(p.warnings, IsEmpty()) << text;
    EXPECT_EQ(p.config.stack_depth, value);
  }
}

TEST(Config, SyncModes) {
  {
    Parsed p = parse({{"FIRSTASSERT_SYNC", "off"}});
    EXPECT_THAT(p.warnings, IsEmpty());
    EXPECT_EQ(p.config.sync.kind, SyncMode::Kind::off);
  }
  {
    Parsed p = parse({{"FIRSTASSERT_SYNC", "all"}});
    EXPECT_THAT(p.warnings, IsEmpty());
    EXPECT_EQ(p.config.sync.kind, SyncMode::Kind::all);
  }
  {
    Parsed p = parse({{"FIRSTASSERT_SYNC", "every:25"}});
    EXPECT_THAT(p.warnings, IsEmpty());
    EXPECT_EQ(p.config.sync.kind, SyncMode::Kind::every);
    EXPECT_EQ(p.config.sync.every, 25u);
  }
  {
    // Every launch is what "all" means.
    Parsed p = parse({{"FIRSTASSERT_SYNC", "every:1"}});
    EXPECT_THAT(p.warnings, IsEmpty());
    EXPECT_EQ(p.config.sync.kind, SyncMode::Kind::all);
  }
  {
    Parsed p = parse({{"FIRSTASSERT_SYNC", "kernel:^nll_loss.*2d$"}});
    EXPECT_THAT(p.warnings, IsEmpty());
    EXPECT_EQ(p.config.sync.kind, SyncMode::Kind::kernel);
    EXPECT_EQ(p.config.sync.kernel_regex, "^nll_loss.*2d$");
  }
}

TEST(Config, InvalidKernelRegexMeansOffNotACrash) {
  Parsed p = parse({{"FIRSTASSERT_SYNC", "kernel:("}});
  ASSERT_THAT(p.warnings, SizeIs(1));
  EXPECT_THAT(p.warnings[0], HasSubstr("FIRSTASSERT_SYNC"));
  EXPECT_THAT(p.warnings[0], HasSubstr("using off"));
  EXPECT_EQ(p.config.sync.kind, SyncMode::Kind::off);
  EXPECT_EQ(p.config.sync.kernel_regex, "");
}

TEST(Config, LogLevels) {
  for (auto [text, level] : {std::pair{"quiet", LogLevel::quiet}, {"info", LogLevel::info}, {"debug", LogLevel::debug}}) {
    Parsed p = parse({{"FIRSTASSERT_LOG", text}});
    EXPECT_THAT(p.warnings, IsEmpty()) << text;
    EXPECT_EQ(p.config.log, level) << text;
  }
}

TEST(Config, Flags) {
  for (const char* off : {"0", "off", "false", "no"}) {
    Parsed p = parse({{"FIRSTASSERT_PYTHON", off}, {"FIRSTASSERT_BREADCRUMBS", off}});
    EXPECT_THAT(p.warnings, IsEmpty()) << off;
    EXPECT_FALSE(p.config.python) << off;
    EXPECT_FALSE(p.config.breadcrumbs) << off;
  }
  for (const char* on : {"1", "on", "true", "yes"}) {
    Parsed p = parse({{"FIRSTASSERT_PYTHON", on}, {"FIRSTASSERT_BREADCRUMBS", on}});
    EXPECT_THAT(p.warnings, IsEmpty()) << on;
    EXPECT_TRUE(p.config.python) << on;
    EXPECT_TRUE(p.config.breadcrumbs) << on;
  }
}

TEST(Config, StderrPipeMode) {
  EXPECT_EQ(parse({}).config.stderr_pipe, StderrPipeMode::automatic);
  EXPECT_EQ(parse({{"FIRSTASSERT_STDERR_PIPE", "auto"}}).config.stderr_pipe, StderrPipeMode::automatic);
  EXPECT_EQ(parse({{"FIRSTASSERT_STDERR_PIPE", "1"}}).config.stderr_pipe, StderrPipeMode::on);
  EXPECT_EQ(parse({{"FIRSTASSERT_STDERR_PIPE", "off"}}).config.stderr_pipe, StderrPipeMode::off);
  Parsed bad = parse({{"FIRSTASSERT_STDERR_PIPE", "sometimes"}});
  EXPECT_EQ(bad.config.stderr_pipe, StderrPipeMode::automatic);
  ASSERT_THAT(bad.warnings, SizeIs(1));
  EXPECT_THAT(bad.warnings[0], HasSubstr("FIRSTASSERT_STDERR_PIPE=\"sometimes\" is not auto, 1 or 0; using auto"));
}

TEST(Config, CuptiPathIsTakenAsGiven) {
  Parsed p = parse({{"FIRSTASSERT_CUPTI", "/opt/cuda/lib64/libcupti.so.13"}});
  EXPECT_THAT(p.warnings, IsEmpty());
  EXPECT_EQ(p.config.cupti_path, "/opt/cuda/lib64/libcupti.so.13");
}

TEST(Config, WritableDirectoryIsUsed) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  Parsed p = parse({{"FIRSTASSERT_DIR", dir.path()}});
  EXPECT_THAT(p.warnings, IsEmpty());
  EXPECT_EQ(p.config.report_dir, dir.path());
}

TEST(Config, NonexistentDirectoryFallsBackToWorkingDirectory) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  std::string missing = dir.path() + "/no/such/dir";
  Parsed p = parse({{"FIRSTASSERT_DIR", missing}});
  ASSERT_THAT(p.warnings, SizeIs(1));
  EXPECT_THAT(p.warnings[0], HasSubstr("FIRSTASSERT_DIR"));
  EXPECT_THAT(p.warnings[0], HasSubstr("using the working directory"));
  EXPECT_EQ(p.config.report_dir, "");
  EXPECT_FALSE(std::filesystem::exists(missing)) << "parsing must not create the directory";
}

TEST(Config, FileInsteadOfDirectoryFallsBackToWorkingDirectory) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  std::string file = dir.path() + "/plain-file";
  std::FILE* f = std::fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  Parsed p = parse({{"FIRSTASSERT_DIR", file}});
  ASSERT_THAT(p.warnings, SizeIs(1));
  EXPECT_THAT(p.warnings[0], HasSubstr("FIRSTASSERT_DIR"));
  EXPECT_THAT(p.warnings[0], HasSubstr("using the working directory"));
  EXPECT_EQ(p.config.report_dir, "");
}

// Root may write anywhere, so as root the check runs in a child that has dropped to an unprivileged user.
TEST(Config, UnwritableDirectoryFallsBackToWorkingDirectory) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  ASSERT_EQ(::chmod(dir.path().c_str(), 0555), 0);

  if (::geteuid() != 0) {
    Parsed p = parse({{"FIRSTASSERT_DIR", dir.path()}});
    ASSERT_THAT(p.warnings, SizeIs(1));
    EXPECT_THAT(p.warnings[0], HasSubstr("FIRSTASSERT_DIR"));
    EXPECT_THAT(p.warnings[0], HasSubstr("using the working directory"));
    EXPECT_EQ(p.config.report_dir, "");
    return;
  }

  // Exit codes: 0 as expected, 1 wrong warnings, 2 report_dir kept, 3 cannot drop privileges.
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
    Parsed p = parse({{"FIRSTASSERT_DIR", dir.path()}});
    if (p.warnings.size() != 1 || p.warnings[0].find("FIRSTASSERT_DIR") == std::string::npos ||
        p.warnings[0].find("using the working directory") == std::string::npos)
      ::_exit(1);
    ::_exit(p.config.report_dir.empty() ? 0 : 2);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 3) GTEST_SKIP() << "running as root and cannot drop to an unprivileged user";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: not exactly one FIRSTASSERT_DIR warning; 2: report_dir kept";
}

TEST(Config, ControlCharactersNeverReachTheWarning) {
  Parsed p = parse({{"FIRSTASSERT_RING", "12\n34\r\x1b[31mred\t\x7f"}});
  ASSERT_THAT(p.warnings, SizeIs(1));
  EXPECT_THAT(p.warnings[0], HasSubstr("FIRSTASSERT_RING"));
  expect_one_line(p.warnings[0]);
  EXPECT_EQ(p.config.ring, Config::kDefaultRing);
}

TEST(Config, HugeValueGivesABoundedWarning) {
  std::string flood(10 * 1024, 'A');
  flood[5000] = '\n';
  for (const char* variable : {"FIRSTASSERT_RING", "FIRSTASSERT_SYNC", "FIRSTASSERT_LOG", "FIRSTASSERT_DIR",
                               "FIRSTASSERT_STACK_DEPTH", "FIRSTASSERT_PYTHON", "FIRSTASSERT_BREADCRUMBS"}) {
    SCOPED_TRACE(variable);
    Parsed p = parse({{variable, flood}});
    ASSERT_THAT(p.warnings, SizeIs(1));
    EXPECT_THAT(p.warnings[0], HasSubstr(variable));
    EXPECT_THAT(p.warnings[0], HasSubstr("using "));
    expect_one_line(p.warnings[0]);
    expect_defaults(p.config);
  }
}

}  // namespace
}  // namespace firstassert
