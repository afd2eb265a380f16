// `firstassert triage`: golden logs in tests/cli/triage (<case>.log in, <case>.out the exact expected stdout), run
// in process through triage_command and, when the built command's path is given as an argument, through the
// `firstassert triage` binary as a user runs it; plus the pieces (line reader, prefixes, text) on their own.
//
//   triage_test [PATH/TO/firstassert] [gtest flags]
//   FIRSTASSERT_UPDATE_GOLDEN=1 triage_test     rewrites the .out files from what triage prints now
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/triage_lines.h"
#include "cli/triage_scan.h"
#include "cli/triage_text.h"
#include "cli/word_lines.h"
#include "skip_aware.h"

#ifndef FIRSTASSERT_TRIAGE_DIR
#error "FIRSTASSERT_TRIAGE_DIR must name tests/cli/triage"
#endif

extern char** environ;

namespace {

using firstassert::cli::Args;
using firstassert::cli::triage_command;
using firstassert::cli::word_lines;
namespace triage = firstassert::cli::triage;

std::string g_binary;  // the built `firstassert`, when given

struct Result {
  int status = -1;
  std::string out, err;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool update_golden() {
  const char* v = std::getenv("FIRSTASSERT_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

// triage_command in this process; stdin_file (if any) stands for stdin.
Result run_in_process(const Args& args, const std::string& stdin_file = "") {
  std::ifstream in;
  std::streambuf* saved = nullptr;
  if (!stdin_file.empty()) {
    in.open(stdin_file, std::ios::binary);
    saved = std::cin.rdbuf(in.rdbuf());
  }
  std::ostringstream out, err;
  Result r;
  r.status = triage_command(args, out, err);
  if (saved != nullptr) std::cin.rdbuf(saved);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// `firstassert triage ARGS` in the working directory (the golden one), stdin from stdin_file or /dev/null.
Result run_binary(const Args& args, const std::string& stdin_file = "") {
  Result r;
  std::string capture = (std::filesystem::temp_directory_path() / "firstassert-triage-XXXXXX").string();
  if (mkdtemp(capture.data()) == nullptr) return r;
  std::string out_path = capture + "/out", err_path = capture + "/err";
  std::vector<std::string> argv = {g_binary, "triage"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> pointers;
  for (std::string& a : argv) pointers.push_back(a.data());
  pointers.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, stdin_file.empty() ? "/dev/null" : stdin_file.c_str(),
                                   O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, g_binary.c_str(), &actions, nullptr, pointers.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc == 0) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = read_file(out_path);
    r.err = read_file(err_path);
  }
  std::filesystem::remove_all(capture);
  return r;
}

// Valid UTF-8 without control characters but tab and newline: printable() leaves each line as it is.
bool valid_text(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (triage::printable(line, line.size() + 1) != line) return false;
  }
  return true;
}

struct GoldenCase {
  std::string name;  // <name>.out holds the expected stdout
  Args args;
  int status;
  std::string err;         // the exact expected stderr
  std::string stdin_file;  // fed as stdin ("-" among the args)
};

void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

const GoldenCase kCases[] = {
    {"nll_loss", {"nll_loss.log"}, 0, "", ""},
    {"index_select", {"index_select.log"}, 0, "", ""},
    {"torchrun_4ranks", {"torchrun_4ranks.log"}, 0, "", ""},
    {"truncated_binary", {"truncated_binary.log"}, 0, "", ""},
    {"clean", {"clean.log"}, 1, "", ""},
    {"jupyter_server", {"jupyter_server.log"}, 0, "", ""},
    {"missing_file",
     {"nll_loss.log", "missing.log", "index_select.log"},
     2,
     "firstassert triage: missing.log: No such file or directory\n",
     ""},
    {"stdin", {"-"}, 0, "", "nll_loss.log"},
    {"several_logs", {"--", "clean.log", "torchrun_4ranks.log"}, 0, "", ""},
    // The forms real logs deliver (tests/unit/golden/device_assert_lines.txt has each form's line on its own).
    {"windows_build", {"windows_build.log"}, 0, "", ""},
    {"glued_progress", {"glued_progress.log"}, 0, "", ""},
    {"wrapped", {"wrapped.log"}, 0, "", ""},
    {"joined_records", {"joined_records.log"}, 0, "", ""},
    {"notebook_rendered", {"notebook_rendered.log"}, 0, "", ""},
    {"interleaved", {"interleaved.log"}, 0, "", ""},
    {"compiled_and_other_devices", {"compiled_and_other_devices.log"}, 0, "", ""},
    {"cut_off", {"cut_off.log"}, 0, "", ""},
    {"not_ranks", {"not_ranks.log"}, 0, "", ""},
    {"single_rank", {"single_rank.log"}, 0, "", ""},
    {"decoys", {"decoys.log"}, 0, "", ""},
    {"pasted", {"pasted.log"}, 0, "", ""},  // quoted, indented as a code block, mpirun's tags
    // Forms a page or a platform gives the lines: ROCm's HIP line, HTML escapes, lost backticks, a log cut at the
    // top (the first complete assertion is taken, the fragment before it shown as one), two ranks' lines spliced
    // (each record keeps its own prefix's rank; a watchdog line names none), a Colab Drive path with blanks.
    {"rocm", {"rocm.log"}, 0, "", ""},
    {"html_escaped", {"html_escaped.log"}, 0, "", ""},
    {"unquoted", {"unquoted.log"}, 0, "", ""},
    {"fragment_first", {"fragment_first.log"}, 0, "", ""},
    {"spliced_ranks", {"spliced_ranks.log"}, 0, "", ""},
    {"drive_path", {"drive_path.log"}, 0, "", ""},
    {"page_markup", {"page_markup.log"}, 0, "", ""},            // markdown emphasis around the condition
    {"grep_numbered", {"grep_numbered.log"}, 0, "", ""},        // grep -n's numbers glued before the path
    {"wrapped_signature", {"wrapped_signature.log"}, 0, "", ""},  // a break right after "block:"
    {"spliced_ranks_json", {"--json", "spliced_ranks.log"}, 0, "", ""},
    // Other containers of the same lines: a saved notebook, a log service's JSON records.
    {"notebook", {"notebook.ipynb"}, 0, "", ""},
    {"json_records", {"json_records.log"}, 0, "", ""},
    // --json (docs/triage-json.md): the same findings, for bots.
    {"interleaved_json", {"--json", "interleaved.log"}, 0, "", ""},
    {"torchrun_4ranks_json", {"torchrun_4ranks.log", "--json"}, 0, "", ""},
    {"clean_json", {"--json", "clean.log"}, 1, "", ""},
};

class Golden : public testing::TestWithParam<GoldenCase> {
 protected:
  void check(const Result& r) {
    const GoldenCase& c = GetParam();
    std::string golden = c.name + ".out";
    if (update_golden()) {
      std::ofstream(golden, std::ios::binary) << r.out;
    } else {
      EXPECT_EQ(r.out, read_file(golden)) << "stdout differs from " << golden
                                          << " (FIRSTASSERT_UPDATE_GOLDEN=1 rewrites it)";
    }
    EXPECT_EQ(r.status, c.status);
    EXPECT_EQ(r.err, c.err);
    // Whatever bytes the log held, the summary is valid UTF-8 text: printable() leaves it as it is.
    EXPECT_TRUE(valid_text(r.out)) << r.out;
  }
};

TEST_P(Golden, InProcess) { check(run_in_process(GetParam().args, GetParam().stdin_file)); }

TEST_P(Golden, Binary) {
  if (g_binary.empty()) GTEST_SKIP() << "no firstassert binary given";
  if (update_golden()) GTEST_SKIP() << "goldens are rewritten by the in-process run";
  check(run_binary(GetParam().args, GetParam().stdin_file));
}

INSTANTIATE_TEST_SUITE_P(Logs, Golden, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<GoldenCase>& info) { return info.param.name; });

TEST(TriageCommand, HelpAndBadUsage) {
  Result help = run_in_process({"--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(help.out.rfind("usage: firstassert triage", 0), 0u) << help.out;
  EXPECT_EQ(help.err, "");

  Result unknown = run_in_process({"--frobnicate", "nll_loss.log"});
  EXPECT_EQ(unknown.status, firstassert::cli::kBadInput);
  EXPECT_EQ(unknown.out, "");
  EXPECT_EQ(unknown.err,
            "firstassert triage: The following argument was not expected: --frobnicate (see firstassert triage --help)\n");
  // The help says every option the parser takes.
  EXPECT_NE(help.out.find("--json"), std::string::npos);

  Result none = run_in_process({});
  EXPECT_EQ(none.status, firstassert::cli::kBadInput);
  EXPECT_EQ(none.err, "firstassert triage: no log given (see firstassert triage --help)\n");
}

TEST(TriageCommand, DirectoryAndOnlyBadLogs) {
  Result r = run_in_process({"/", "missing.log"});
  EXPECT_EQ(r.status, firstassert::cli::kBadInput);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "firstassert triage: /: is a directory\n"
            "firstassert triage: missing.log: No such file or directory\n");
}

// Runs triage on a log holding text, written to a temporary file.
Result triage_text(const std::string& text) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("firstassert-triage-" + std::to_string(getpid()) + ".log")).string();
  std::ofstream(path, std::ios::binary) << text;
  Result r = run_in_process({path});
  std::filesystem::remove(path);
  return r;
}

// A line far over the bound is cut and reading goes on; the assertion after it is still found.
TEST(TriageCommand, HugeLineIsCut) {
  Result r = triage_text(std::string(3 * triage::kMaxLineBytes + 17, 'x') + "\n" +
                         "k.cu:7: kern: block: [0,0,0], thread: [1,0,0] Assertion `i < n` failed.\n");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find(": 2 lines, 1 line cut at 1 MiB\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  1. kern at k.cu:7\n"), std::string::npos) << r.out;
}

// A device-side assert without the driver's lines (stderr elsewhere, or lost): said so. An illegal address has
// no assertion line and no hint, but is still a CUDA error found.
TEST(TriageCommand, TracebacksWithoutAssertionLines) {
  const std::string traceback =
      "Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n    x.item()\n";
  Result assert_only = triage_text(traceback + "RuntimeError: CUDA error: device-side assert triggered\n");
  EXPECT_EQ(assert_only.status, 0);
  EXPECT_NE(assert_only.out.find("Device-side assertions: none in the logs\n"), std::string::npos) << assert_only.out;
  EXPECT_NE(assert_only.out.find("No assertion lines, yet a device-side assert"), std::string::npos);
  EXPECT_NE(assert_only.out.find("    last frame: File \"t.py\", line 3, in <module>\n"), std::string::npos);

  Result illegal = triage_text(traceback + "RuntimeError: CUDA error: an illegal memory access was encountered\n");
  EXPECT_EQ(illegal.status, 0);
  EXPECT_NE(illegal.out.find("CUDA error: 1 (the first, then 0 secondary)"), std::string::npos) << illegal.out;
  EXPECT_EQ(illegal.out.find("Hint:"), std::string::npos);
  EXPECT_EQ(illegal.out.find("No assertion lines"), std::string::npos);

  // A traceback without a CUDA error is not counted; NCCL's own wording of one, inside the message, is.
  Result nccl = triage_text(traceback + "torch.distributed.DistBackendError: NCCL error in: x.cpp:1, unhandled cuda "
                                        "error\nLast error:\nCuda failure 'device-side assert triggered'\n\n" +
                            traceback + "ValueError: bad\n");
  EXPECT_EQ(nccl.status, 0);
  EXPECT_NE(nccl.out.find("CUDA error: 1 (the first, then 0 secondary)"), std::string::npos) << nccl.out;
  EXPECT_NE(nccl.out.find("    Cuda failure 'device-side assert triggered'\n"), std::string::npos) << nccl.out;
}

std::vector<std::string> lines_of(const std::string& text, size_t max_line, size_t chunk,
                                  std::vector<bool>* cut = nullptr) {
  std::istringstream in(text);
  triage::LineReader reader(in, max_line, chunk);
  std::vector<std::string> lines;
  std::string_view line;
  while (reader.next(line)) {
    lines.emplace_back(line);
    if (cut != nullptr) cut->push_back(reader.cut());
  }
  return lines;
}

TEST(LineReader, LinesAcrossChunksCutAndUnterminated) {
  using V = std::vector<std::string>;
  for (size_t chunk : {1, 2, 3, 7, 64, 4096}) {
    std::vector<bool> cut;
    EXPECT_EQ(lines_of("ab\n\nabcdefghij\nxyz", 5, chunk, &cut), (V{"ab", "", "abcde", "xyz"})) << chunk;
    EXPECT_EQ(cut, (std::vector<bool>{false, false, true, false})) << chunk;
    EXPECT_EQ(lines_of("a\nb\n", 5, chunk), (V{"a", "b"})) << chunk;
    EXPECT_EQ(lines_of("", 5, chunk), V{}) << chunk;
  }
}

TEST(Prefixes, LaunchersAndLogServers) {
  auto check = [](std::string_view line, std::string_view text, int rank) {
    triage::PrefixedLine p = triage::strip_prefixes(line);
    EXPECT_EQ(p.text, text) << line;
    EXPECT_EQ(p.rank, rank) << line;
  };
  check("[rank3]: Traceback (most recent call last):", "Traceback (most recent call last):", 3);
  check("[rank12]:   File \"a.py\", line 1, in f", "  File \"a.py\", line 1, in f", 12);
  check("[rank0]:[E305 ProcessGroupNCCL.cpp:616] x", "[E305 ProcessGroupNCCL.cpp:616] x", 0);
  check("[default1]:hello", "hello", 1);
  check("3: hello", "hello", 3);
  check(" 3: hello\r", "hello", 3);
  check("0: [rank5]: hello", "hello", 5);
  check("10:30:00 a time", "a time", triage::kNoRank);  // a time stamp, not srun's label
  // Prefixes that are not ranks.
  check("(RayTrainWorker pid=4411, ip=10.1.2.3) k.cu:1: x", "k.cu:1: x", triage::kNoRank);
  check("(Worker pid=77) [rank2]: k.cu:1: x", "k.cu:1: x", 2);
  check("ERROR 05-12 10:11:12 [core.py:291] k.cu:1: x", "k.cu:1: x", triage::kNoRank);
  check("INFO 05-12 10:11:12 [engine.py:9] ready", "ready", triage::kNoRank);
  check("ERROR:root:k.cu:1: x", "k.cu:1: x", triage::kNoRank);
  check("2026-03-02 08:15:42,118 - k.cu:1: x", "- k.cu:1: x", triage::kNoRank);
  check("2026-03-02T08:15:42.118Z k.cu:1: x", "k.cu:1: x", triage::kNoRank);
  check("[2026-03-02 08:15:42] k.cu:1: x", "k.cu:1: x", triage::kNoRank);
  check("15: [2026-03-02 08:15:42] INFO 03-02 08:15:42 [x.py:1] k.cu:1: x", "k.cu:1: x", 15);
  check("ERROR: cannot open file", "ERROR: cannot open file", triage::kNoRank);
  check("ERROR: ../aten/k.cu:1: x", "ERROR: ../aten/k.cu:1: x", triage::kNoRank);  // the path is the text's
  check("ERROR:/src/k.cu:1: x", "ERROR:/src/k.cu:1: x", triage::kNoRank);
  check("(not a prefix) text", "(not a prefix) text", triage::kNoRank);
  check("[1,3]<stderr>:k.cu:1: x", "k.cu:1: x", 3);  // mpirun --tag-output: job 1, rank 3
  check("[1,3]<stdout>:step 4", "step 4", 3);
  check("[1,3] not a tag", "[1,3] not a tag", triage::kNoRank);
  check("> [rank1]: k.cu:1: x", "k.cu:1: x", 1);  // quoted in markdown
  check("[I 2025-01-20 16:02:11.871 ServerApp] Kernel started", "Kernel started", triage::kNoRank);
  check("Jun 5, 2024, 3:21:07 PM\tWARNING\tk.cu:1: f: block", "k.cu:1: f: block", triage::kNoRank);
  check("1: 41%|####  | 41/100\rk.cu:1: x", "k.cu:1: x", 1);
  check("[rankX]: no", "[rankX]: no", triage::kNoRank);
}

TEST(Text, PrintableReplacesInvalidBytesAndControls) {
  EXPECT_EQ(triage::printable("caf\xc3\xa9 \xe2\x96\x88"), "caf\xc3\xa9 \xe2\x96\x88");
  EXPECT_EQ(triage::printable("r\xe9sum\xe9"), "r\xef\xbf\xbdsum\xef\xbf\xbd");
  EXPECT_EQ(triage::printable("\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80"),
            "\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef"
            "\xbf\xbd");
  EXPECT_EQ(triage::printable(std::string("a\0b\x1b\tc", 6)), "a\xef\xbf\xbd" "b\xef\xbf\xbd\tc");
  EXPECT_EQ(triage::printable("abcdef", 3), "abc...");
  std::string scratch;
  EXPECT_EQ(triage::strip_ansi("\x1b[31mRuntimeError\x1b[0m: x", scratch), "RuntimeError: x");
  EXPECT_EQ(triage::wrap("aa bb cc", 7, "  "), "  aa bb\n  cc\n");
}

TEST(Text, WordLinesBreakBetweenWordsOnly) {
  EXPECT_EQ(word_lines("aa bb cc", 5), (std::vector<std::string>{"aa bb", "cc"}));
  EXPECT_EQ(word_lines(" aa\tbb\n\ncc  ", 100), (std::vector<std::string>{"aa bb cc"}));
  EXPECT_EQ(word_lines("a abcdefgh b", 4), (std::vector<std::string>{"a", "abcdefgh", "b"}));
  EXPECT_TRUE(word_lines(" \t\n", 10).empty());
  // The indent counts toward triage's width.
  EXPECT_EQ(triage::wrap("aa bb", 7, "  "), "  aa bb\n");
  EXPECT_EQ(triage::wrap("aa bb", 6, "  "), "  aa\n  bb\n");
  EXPECT_EQ(triage::wrap("", 6, "  "), "");
}

TEST(Text, CudaErrorCodes) {
  EXPECT_EQ(triage::cuda_error_code("RuntimeError: CUDA error: device-side assert triggered"), 710);
  EXPECT_EQ(triage::cuda_error_code("RuntimeError: CUDA error: an illegal memory access was encountered"), 700);
  EXPECT_EQ(triage::cuda_error_code("NCCL WARN Cuda failure 'unspecified launch failure'"), 719);
  EXPECT_EQ(triage::cuda_error_code("RuntimeError: CUDA error: device-side assert trig"), 0);
  EXPECT_EQ(triage::cuda_error_code("nothing here"), 0);
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  // What gtest left: the built command, when meson passes it.
  if (argc > 1) g_binary = std::filesystem::absolute(argv[1]).string();
  // The golden logs are named relative to their directory, as a user names logs in theirs.
  std::filesystem::current_path(FIRSTASSERT_TRIAGE_DIR);
  return test_support::run_all_tests_skip_aware();
}
