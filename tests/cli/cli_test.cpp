// The firstassert command, driven as a user drives it: run over simulator programs, show on golden reports
// (compared line for line with the expected text), merge over a generated job of 4 ranks, and every bad input.
// FIRSTASSERT_UPDATE_GOLDEN=1 rewrites the expected texts from what the command prints.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "process_runner.h"
#include "shim_run.h"

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const std::string kCli = FIRSTASSERT_CLI;
const std::string kGolden = GOLDEN_DIR;

e2e::Run cli(std::vector<std::string> args, const std::string& cwd, std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), kCli);
  return e2e::run(args, env, cwd);
}

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

void expect_golden(const std::string& actual, const std::string& name) {
  std::string path = kGolden + "/" + name;
  if (std::getenv("FIRSTASSERT_UPDATE_GOLDEN") != nullptr) write(path, actual);
  EXPECT_EQ(actual, e2e::read_file(path)) << "differs from " << path << " (FIRSTASSERT_UPDATE_GOLDEN=1 rewrites it)";
}

// ---- run ------------------------------------------------------------------------------------------------------

TEST(CliRun, KeepsTheJobsExitStatusAndOutputAndListsItsReport) {
  e2e::TempDir dir, bare_dir;
  e2e::Run bare = e2e::run({RUNTIME_JOB}, {}, bare_dir.path());
  e2e::Run r = cli({"run", "--dir", dir.path(), "--", RUNTIME_JOB}, dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, bare.out) << "the job's stdout is its own";
  std::vector<std::string> reports = dir.files("firstassert-");
  ASSERT_EQ(reports.size(), 1u) << r.err;
  EXPECT_NE(r.err.find("firstassert: report: " + reports[0] + "\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("firstassert: first device-side assert"), std::string::npos);
}

// pip may install into a path with a space (a venv in "My Projects") or a colon, which LD_PRELOAD splits on: run
// reaches the shim through a per-user link without one, and the shim still finds its recorder beside itself.
TEST(CliRun, AShimUnderAPathWithASpaceOrColonIsStillPreloaded) {
  for (const auto& [odd, relative] : {std::pair{"my venv", false}, {"a:b", false}, {"rel venv", true}}) {
    SCOPED_TRACE(odd);
    e2e::TempDir dir, links;
    std::string native = dir.path() + "/" + odd + "/_native";
    fs::create_directories(native);
    for (const fs::path& library : {fs::path(FIRSTASSERT_SHIM), fs::path(FIRSTASSERT_SHIM).parent_path() /
                                                                   "libfirstassert_recorder.so"})
      fs::copy_file(library, native + "/" + library.filename().string());
    std::string named = relative ? std::string(odd) + "/_native/libfirstassert.so" : native + "/libfirstassert.so";
    e2e::Run r = cli({"run", "--dir", dir.path(), "--", RUNTIME_JOB}, dir.path(),
                     {{"FIRSTASSERT_LIB", named}, {"XDG_RUNTIME_DIR", links.path()}});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(dir.files("firstassert-").size(), 1u) << r.err;
    EXPECT_NE(r.err.find("firstassert: first device-side assert"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("cannot"), std::string::npos) << "the recorder was found beside the shim: " << r.err;
    fs::path own = links.path() + "/firstassert-" + std::to_string(::getuid());
    EXPECT_EQ(fs::status(own).permissions() & fs::perms::all, fs::perms::owner_all);
    size_t made = 0;
    for (const fs::directory_entry& link : fs::directory_iterator(own)) {
      EXPECT_EQ(fs::read_symlink(link.path()), fs::path(native));
      ++made;
    }
    EXPECT_EQ(made, 1u);
  }
}

// A runtime directory others may change (group or world writable, not sticky; or another user's, as after `su`)
// is passed over for /tmp, where no one else can rename or remove this user's links.
TEST(CliRun, ALinkIsNeverMadeWhereAnotherUserCouldSwapIt) {
  e2e::TempDir dir, links;
  std::string native = dir.path() + "/my venv";
  fs::create_directories(native);
  for (const fs::path& library : {fs::path(FIRSTASSERT_SHIM), fs::path(FIRSTASSERT_SHIM).parent_path() /
                                                                 "libfirstassert_recorder.so"})
    fs::copy_file(library, native + "/" + library.filename().string());
  fs::permissions(links.path(), fs::perms::all);
  e2e::Run r = cli({"run", "--dir", dir.path(), "--", RUNTIME_JOB}, dir.path(),
                   {{"FIRSTASSERT_LIB", native + "/libfirstassert.so"}, {"XDG_RUNTIME_DIR", links.path()}});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(dir.files("firstassert-").size(), 1u) << r.err;
  EXPECT_TRUE(fs::is_empty(links.path())) << "nothing made in a directory others can change";
  EXPECT_TRUE(fs::is_directory("/tmp/firstassert-" + std::to_string(::getuid())));
}

TEST(CliLib, PrintsWhatLdPreloadCanCarry) {
  e2e::TempDir dir, links;
  e2e::Run plain = cli({"lib"}, dir.path(), {{"FIRSTASSERT_LIB", FIRSTASSERT_SHIM}});
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out, std::string(FIRSTASSERT_SHIM) + "\n");
  std::string native = dir.path() + "/my venv";
  fs::create_directories(native);
  fs::copy_file(FIRSTASSERT_SHIM, native + "/libfirstassert.so");
  e2e::Run odd = cli({"lib"}, dir.path(),
                     {{"FIRSTASSERT_LIB", native + "/libfirstassert.so"}, {"XDG_RUNTIME_DIR", links.path()}});
  EXPECT_EQ(odd.exit_code, 0) << odd.err;
  ASSERT_FALSE(odd.out.empty());
  std::string printed = odd.out.substr(0, odd.out.size() - 1);
  EXPECT_EQ(printed.rfind(links.path() + "/firstassert-", 0), 0u) << printed;
  EXPECT_EQ(printed.find_first_of(" :"), std::string::npos) << printed;
  EXPECT_TRUE(fs::equivalent(printed, native + "/libfirstassert.so"));
  e2e::Run extra = cli({"lib", "now"}, dir.path());
  EXPECT_EQ(extra.exit_code, 2);
  EXPECT_EQ(extra.err, "firstassert lib: takes no arguments (see firstassert lib --help)\n");
}

TEST(CliRun, AShimPathLdPreloadCannotCarryAndNoPlaceForALinkIsOneLine) {
  e2e::TempDir dir, links;
  std::string native = dir.path() + "/my venv";
  fs::create_directories(native);
  fs::copy_file(FIRSTASSERT_SHIM, native + "/libfirstassert.so");
  // Another user's directory, or one open to others, is refused: someone could point the link at their library.
  fs::create_directories(links.path() + "/firstassert-" + std::to_string(::getuid()));
  fs::permissions(links.path() + "/firstassert-" + std::to_string(::getuid()), fs::perms::all);
  e2e::Run r = cli({"run", "--", "true"}, dir.path(),
                   {{"FIRSTASSERT_LIB", native + "/libfirstassert.so"}, {"XDG_RUNTIME_DIR", links.path()}});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("holds a space or colon, which LD_PRELOAD cannot carry"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is not a directory of this user's alone"), std::string::npos) << r.err;
}

// As under torchrun or mpirun: a launcher starting several ranks, each inheriting the shim.
TEST(CliRun, ListsTheReportsOfEveryProcessTheLauncherStarted) {
  e2e::TempDir dir;
  std::string job = RUNTIME_JOB;
  e2e::Run r = cli({"run", "--", "sh", "-c", "RANK=0 " + job + " & RANK=1 " + job + " & wait"}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << "the launcher's own status";
  std::vector<std::string> reports = dir.files("firstassert-");
  ASSERT_EQ(reports.size(), 2u) << r.err;
  for (const std::string& report : reports) EXPECT_NE(r.err.find("firstassert: report: " + report), std::string::npos);
  std::set<int> ranks;
  for (const std::string& report : reports) ranks.insert(json::parse(e2e::read_file(report))["process"]["rank"].get<int>());
  EXPECT_EQ(ranks, (std::set<int>{0, 1}));
}

TEST(CliRun, PassesOnTheSignalThatKilledTheJob) {
  e2e::TempDir dir;
  e2e::Run r = cli({"run", "--dir", dir.path(), PINPOINT_JOB, "kill"}, dir.path());
  EXPECT_EQ(r.exit_code, 128 + 9) << "firstassert itself dies of the job's SIGKILL";
  EXPECT_NE(r.err.find("firstassert: report: "), std::string::npos) << "the report written at detection is listed";
}

TEST(CliRun, HealthyJobListsNothing) {
  e2e::TempDir dir;
  e2e::Run r = cli({"run", "--", RUNTIME_JOB, "--healthy"}, dir.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(dir.files("firstassert-").empty());
}

TEST(CliRun, SyncOptionReachesTheShim) {
  e2e::TempDir dir;
  e2e::Run r = cli({"run", "--sync", "all", "--", PINPOINT_JOB, "in-flight"}, dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("next call: cudaErrorAssert"), std::string::npos) << "forced syncs caught it at once";
}

// --values check: the job's Pythons find firstassert's sitecustomize first on PYTHONPATH (before the job's own entries)
// and FIRSTASSERT_VALUES=check; the Python side is tests/python/values_activation_test.py and tests/torch.
TEST(CliRun, ValuesOptionPutsTheSitecustomizeFirstOnPythonPath) {
  e2e::TempDir dir;
  const std::vector<std::string> job = {"--", "/bin/sh", "-c", "echo \"$FIRSTASSERT_VALUES|$PYTHONPATH\""};
  for (const std::vector<std::string>& flag : {std::vector<std::string>{"--values=check"}, {"--values", "Check"}}) {
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), flag.begin(), flag.end());
    args.insert(args.end(), job.begin(), job.end());
    e2e::Run r = cli(args, dir.path(), {{"PYTHONPATH", "/the/jobs/own"}});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    size_t bar = r.out.find('|'), colon = r.out.find(':');
    ASSERT_NE(bar, std::string::npos) << r.out;
    EXPECT_EQ(r.out.substr(0, bar), "check");
    std::string site = r.out.substr(bar + 1, colon - bar - 1);
    EXPECT_TRUE(fs::is_regular_file(site + "/sitecustomize.py")) << r.out;
    EXPECT_NE(site.find("firstassert/values/_site"), std::string::npos) << site;
    EXPECT_EQ(r.out.substr(colon), ":/the/jobs/own\n");
  }
  // Without the option, FIRSTASSERT_VALUES decides; with no PYTHONPATH, the directory alone.
  e2e::Run inherited = cli({"run", "--", "/bin/sh", "-c", "echo \"$FIRSTASSERT_VALUES|$PYTHONPATH\""}, dir.path(),
                           {{"FIRSTASSERT_VALUES", "check"}, {"PYTHONPATH", ""}});
  EXPECT_EQ(inherited.out.rfind("check|/", 0), 0u) << inherited.out;
  EXPECT_EQ(inherited.out.find(':'), std::string::npos) << inherited.out;
}

// The sitecustomize goes first on PYTHONPATH whatever the values mode (it also keeps the model's lines of compiled
// graphs); off or a bad mode leaves the job's values checks off.
TEST(CliRun, ValuesOffOrBadKeepsTheJobOffWithTheSitecustomizeFirst) {
  e2e::TempDir dir;
  const std::vector<std::string> job = {"/bin/sh", "-c", "echo \"$FIRSTASSERT_VALUES|$PYTHONPATH\""};
  auto with = [&](const std::string& flag) {
    std::vector<std::string> args = {"run", flag, "--"};
    args.insert(args.end(), job.begin(), job.end());
    return cli(args, dir.path(), {{"FIRSTASSERT_VALUES", "check"}, {"PYTHONPATH", "/the/jobs/own"}});
  };
  auto site_then_own = [](const std::string& out, const std::string& mode) {
    std::string prefix = mode + "|/";
    if (out.rfind(prefix, 0) != 0) return false;
    size_t colon = out.find(':');
    return colon != std::string::npos &&
           fs::is_regular_file(out.substr(mode.size() + 1, colon - mode.size() - 1) + "/sitecustomize.py") &&
           out.substr(colon) == ":/the/jobs/own\n";
  };
  e2e::Run off = with("--values=off");
  EXPECT_EQ(off.exit_code, 0);
  EXPECT_TRUE(site_then_own(off.out, "off")) << off.out;
  EXPECT_EQ(off.err, "");
  e2e::Run bad = with("--values=chek");
  EXPECT_EQ(bad.exit_code, 0) << "the job still runs, unchecked";
  EXPECT_TRUE(site_then_own(bad.out, "off")) << bad.out;
  EXPECT_EQ(bad.err, "firstassert run: --values chek is not a values mode (modes: off, check, probe); values "
                     "checks are off for this job\n");
  e2e::Run probe = with("--values=probe");
  EXPECT_EQ(probe.exit_code, 0) << probe.err;
  EXPECT_EQ(probe.out.rfind("probe|/", 0), 0u) << "probe mode reaches the job: " << probe.out;
  EXPECT_EQ(probe.err, "");
  e2e::Run missing = cli({"run", "--values"}, dir.path());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "firstassert run: --values needs a value (see firstassert run --help)\n");
}

TEST(CliRun, BadUsage) {
  e2e::TempDir dir;
  e2e::Run none = cli({"run"}, dir.path());
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err, "firstassert run: no command given (see firstassert run --help)\n");
  e2e::Run missing = cli({"run", "--", "/nonexistent/program"}, dir.path());
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_EQ(missing.err, "firstassert run: cannot run '/nonexistent/program': No such file or directory\n");
  e2e::Run bad_dir = cli({"run", "--dir", "/nonexistent/dir", "--", "true"}, dir.path());
  EXPECT_EQ(bad_dir.exit_code, 2);
  EXPECT_EQ(bad_dir.err, "firstassert run: --dir /nonexistent/dir is not a directory\n");
  e2e::Run no_lib = cli({"run", "--", "true"}, dir.path(), {{"FIRSTASSERT_LIB", "/nonexistent/libfirstassert.so"}});
  EXPECT_EQ(no_lib.exit_code, 2);
  EXPECT_NE(no_lib.err.find("libfirstassert.so not found"), std::string::npos) << no_lib.err;
}

// ---- --version ----------------------------------------------------------------------------------------------------

// The PyTorch the python3 on PATH imports (here one on PYTHONPATH, as a venv's would be), read from its version.py.
TEST(CliVersion, SaysItsVersionTheCudaItWasBuiltAgainstAndThePyTorchHere) {
  e2e::TempDir dir;
  fs::create_directories(dir.path() + "/site/torch");
  write(dir.path() + "/site/torch/__init__.py", "");
  write(dir.path() + "/site/torch/version.py",
        "__version__ = '2.8.0+cu128'\ndebug = False\ncuda: Optional[str] = '12.8'\n");
  e2e::Run r = cli({"--version"}, dir.path(), {{"PYTHONPATH", dir.path() + "/site"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "firstassert " FIRSTASSERT_VERSION_TEXT);
  EXPECT_NE(r.out.find("built against CUDA 13."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PyTorch here: 2.8.0+cu128 (built with CUDA 12.8) at " + dir.path() + "/site/torch\n"),
            std::string::npos)
      << r.out;
  e2e::Run none = cli({"--version"}, dir.path(), {{"PYTHONPATH", dir.path() + "/nothing"}});
  EXPECT_NE(none.out.find("PyTorch here: none importable by python3 on PATH"), std::string::npos) << none.out;
}

// ---- show -----------------------------------------------------------------------------------------------------

TEST(CliShow, AssertReportReadsAsTheGoldenText) {
  e2e::TempDir dir;
  e2e::Run r = cli({"show", "assert_report.json"}, kGolden);  // a relative path: the text names it as given
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  expect_golden(r.out, "assert_report.txt");
}

TEST(CliShow, RefusedLaunchReportReadsAsTheGoldenText) {
  e2e::TempDir dir;
  e2e::Run r = cli({"show", "refused_report.json"}, kGolden);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expect_golden(r.out, "refused_report.txt");
}

TEST(CliShow, SmallWindowReportReadsAsTheGoldenText) {
  e2e::TempDir dir;
  e2e::Run r = cli({"show", "window_report.json"}, kGolden);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  expect_golden(r.out, "window_report.txt");
}

// A Triton kernel of a torch.compile graph: what it fused, where its wrapper launched it, the model's line, that the
// device's location is generated code, and what to rerun for the value.
TEST(CliShow, CompiledKernelReportReadsAsTheGoldenText) {
  e2e::Run r = cli({"show", "compiled_report.json"}, kGolden);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  expect_golden(r.out, "compiled_report.txt");
}

// A window of at most four names each launch under the confidence: kernel, stream and the user's line (the innermost
// frame outside the libraries, else the top native frame), the one shown marked; in a notebook, cells by their
// names. A window of five is left to the candidates' list.
TEST(CliShow, ASmallWindowNamesEachOfItsLaunches) {
  e2e::TempDir dir;
  const std::string window_row =
      "shown, not claimed\n"  // the confidence row's end: the window comes right under it
      "window       the failing launch is one of these 3 (<- the one shown)\n"
      "             triton_poi_fused_embedding_0  stream 0x5555beef0000  /home/ana/project/model.py:17 in forward\n"
      "             vectorized_elementwise_kernel  stream 0x5555deadbeef  at::native::fill_kernel_cuda(at::TensorIterator&, "
      "c10::Scalar const&)\n"
      "             nll_loss_forward_reduce_cuda_kernel_2d  stream 0x5555deadbeef  /home/ana/project/train.py:42 in "
      "compute_loss  <- shown\n"
      "launch       ";
  e2e::Run text = cli({"show", "window_report.json"}, kGolden);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(window_row), std::string::npos) << text.out;

  e2e::Run rows = cli({"show", "--rows", "window_report.json"}, kGolden);
  ASSERT_EQ(rows.exit_code, 0) << rows.err;
  json view = json::parse(rows.out);
  std::vector<std::string> keys;
  for (const json& row : view["rows"]) keys.push_back(row["key"]);
  EXPECT_EQ(keys, (std::vector<std::string>{"process", "command", "first_error", "kernel", "confidence", "window",
                                            "launch", "launched_at", "device", "hint", "python", "candidates",
                                            "secondary", "written"}));

  // In a notebook, the launches from cells are named as IPython names them.
  json report = json::parse(e2e::read_file(kGolden + "/window_report.json"));
  const std::string cell_file = "/tmp/ipykernel_5151/1234.py";
  report["candidates"][0]["python_stack"][1] = {{"file", cell_file}, {"line", 3}, {"function", "<module>"}};
  std::string path = dir.path() + "/firstassert-host-1.json";
  std::ofstream(path) << report.dump();
  std::ofstream(path + ".cells") << json{{cell_file, {{"cell", "In[7]"}, {"source", "a\nb\nc\n"}}}}.dump();
  e2e::Run cells = cli({"show", path}, dir.path());
  ASSERT_EQ(cells.exit_code, 0) << cells.err;
  EXPECT_NE(cells.out.find("\n             triton_poi_fused_embedding_0  stream 0x5555beef0000  Cell In[7], line 3\n"),
            std::string::npos)
      << cells.out;

  // Five launches: no window row; the candidates' list is as it was.
  report = json::parse(e2e::read_file(kGolden + "/window_report.json"));
  for (long long seq : {3009, 3008}) {
    json older = report["candidates"][2];
    older["seq"] = seq;
    report["candidates"].push_back(older);
  }
  report["decision"]["candidates"] = 5;
  std::ofstream(path, std::ios::trunc) << report.dump();
  std::filesystem::remove(path + ".cells");
  e2e::Run five = cli({"show", path}, dir.path());
  ASSERT_EQ(five.exit_code, 0) << five.err;
  EXPECT_EQ(five.out.find("\nwindow "), std::string::npos) << five.out;
  EXPECT_EQ(five.out.find("<- shown"), std::string::npos) << five.out;
  EXPECT_NE(five.out.find("\ncandidates   5 launches had not been seen to complete\n"), std::string::npos) << five.out;

  // The same five, of which the device's line fits the first two (the decision lists them first): those two are the
  // window, named whole.
  report["decision"]["fitting"] = 2;
  std::ofstream(path, std::ios::trunc) << report.dump();
  e2e::Run fitting = cli({"show", path}, dir.path());
  ASSERT_EQ(fitting.exit_code, 0) << fitting.err;
  EXPECT_NE(fitting.out.find("\nwindow       the failing launch is one of these 2 that fit the device's line (<- the "
                             "one shown)\n             triton_poi_fused_embedding_0  stream 0x5555beef0000  "),
            std::string::npos)
      << fitting.out;
  EXPECT_EQ(fitting.out.find("nll_loss_forward_reduce_cuda_kernel_2d  stream"), std::string::npos)
      << "the third launch does not fit: not in the window's row";
}

// A report that names no culprit says so, with the decision's confidence and reason.
TEST(CliShow, AReportWithoutACulpritShowsWhyNoneIsNamed) {
  e2e::TempDir dir;
  json report = json::parse(e2e::read_file(kGolden + "/assert_report.json"));
  report["culprit"] = nullptr;
  report["decision"] = {{"confidence", "unknown"},
                        {"reason", "the failing launch cannot be named: the launch ring dropped it"},
                        {"candidates", 0}};
  std::string path = dir.path() + "/firstassert-host-1.json";
  std::ofstream(path) << report.dump();
  e2e::Run r = cli({"show", path}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("kernel       not named\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("confidence   unknown: the failing launch cannot be named: the launch ring dropped it\n"),
            std::string::npos)
      << r.out;
}

// A notebook's cells are named as IPython names them, from the names the Python package keeps beside the report
// (REPORT.cells) or gives with --cells; the launching line is the innermost frame of the user's code, with its text.
TEST(CliShow, NotebookCellsAreNamedAndTheLaunchingLineQuoted) {
  e2e::TempDir dir;
  const std::string cell_file = "/tmp/ipykernel_4242/3664598579.py";
  json report = json::parse(e2e::read_file(kGolden + "/assert_report.json"));
  report["culprit"]["python_stack"] = json::array(
      {{{"file", "/usr/lib/python3/site-packages/torch/nn/functional.py"}, {"line", 3100}, {"function", "cross_entropy"}},
       {{"file", cell_file}, {"line", 2}, {"function", "step"}},
       {{"file", cell_file}, {"line", 5}, {"function", "<module>"}}});
  std::string path = dir.path() + "/firstassert-host-1.json";
  std::ofstream(path) << report.dump();
  json names = {{cell_file, {{"cell", "In[4]"}, {"source", "def step(x, y):\n    return F.cross_entropy(x, y)\n"}}}};

  std::ofstream(path + ".cells") << names.dump();
  e2e::Run beside = cli({"show", path}, dir.path());
  ASSERT_EQ(beside.exit_code, 0) << beside.err;
  EXPECT_NE(beside.out.find("launched at  Cell In[4], line 2, in step  ->  return F.cross_entropy(x, y)\n"),
            std::string::npos)
      << beside.out;
  EXPECT_NE(beside.out.find("python       /usr/lib/python3/site-packages/torch/nn/functional.py:3100 in "
                            "cross_entropy\n             Cell In[4], line 2, in step\n             Cell In[4], line 5\n"),
            std::string::npos)
      << beside.out;

  std::filesystem::rename(path + ".cells", dir.path() + "/names.json");
  e2e::Run given = cli({"show", "--cells", dir.path() + "/names.json", path}, dir.path());
  EXPECT_EQ(given.out, beside.out);
  e2e::Run unnamed = cli({"show", path}, dir.path());
  EXPECT_NE(unnamed.out.find("launched at  " + cell_file + ":2 in step\n"), std::string::npos) << unnamed.out;

  std::ofstream(dir.path() + "/bad.json") << "[1, 2]";
  e2e::Run bad = cli({"show", "--cells", dir.path() + "/bad.json", path}, dir.path());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "firstassert show: --cells " + dir.path() + "/bad.json: not a JSON object of cell names\n");
}

// --rows gives the text's rows, for the notebook: each row's label and lines as the text prints them.
TEST(CliShow, RowsAreTheRowsOfTheText) {
  e2e::TempDir dir;
  e2e::Run text = cli({"show", "assert_report.json"}, kGolden);
  e2e::Run rows = cli({"show", "--rows", "assert_report.json"}, kGolden);
  ASSERT_EQ(rows.exit_code, 0) << rows.err;
  json view = json::parse(rows.out);
  EXPECT_EQ(view["path"], "assert_report.json");
  std::vector<std::string> keys;
  for (const json& row : view["rows"]) {
    keys.push_back(row["key"]);
    std::string label = row["label"];
    std::string first = row["lines"][0];
    EXPECT_NE(text.out.find(label + std::string(13 - label.size(), ' ') + first.substr(0, 40)), std::string::npos)
        << label << ": " << first;
  }
  // The golden report has its environment, a culprit with a device message, a hint, both stacks, two candidates and
  // later errors.
  EXPECT_EQ(keys, (std::vector<std::string>{"process", "command", "environment", "first_error", "gpu", "kernel",
                                            "confidence", "launch", "launched_at", "device", "hint", "python",
                                            "native", "candidates", "secondary", "written"}));
  e2e::Run both = cli({"show", "--rows", "--json", "assert_report.json"}, kGolden);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_EQ(both.err, "firstassert show: --json or --rows, not both\n");
}

TEST(CliShow, ColorOnlyWhenAskedOrOnATerminal) {
  e2e::TempDir dir;
  e2e::Run piped = cli({"show", kGolden + "/assert_report.json"}, dir.path());
  EXPECT_EQ(piped.out.find("\033["), std::string::npos);
  e2e::Run forced = cli({"show", "--color=always", kGolden + "/assert_report.json"}, dir.path());
  EXPECT_NE(forced.out.find("\033[1;31m"), std::string::npos);
}

TEST(CliShow, JsonPassesTheReportThrough) {
  e2e::TempDir dir;
  e2e::Run r = cli({"show", "--json", kGolden + "/assert_report.json"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json shown = json::parse(r.out);
  json original = json::parse(e2e::read_file(kGolden + "/assert_report.json"));
  EXPECT_EQ(shown, original) << "nothing to resolve offline here: the modules are not on this machine";
}

TEST(CliShow, DefaultIsTheNewestReportOfTheCurrentDirectory) {
  e2e::TempDir dir;
  fs::copy_file(kGolden + "/refused_report.json", dir.path() + "/firstassert-a-1.json");
  fs::copy_file(kGolden + "/assert_report.json", dir.path() + "/firstassert-b-2.json");
  fs::last_write_time(dir.path() + "/firstassert-b-2.json", fs::file_time_type::clock::now() - std::chrono::hours(1));
  e2e::Run r = cli({"show"}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("my_op_kernel"), std::string::npos) << "the newer file, not the first by name";
}

TEST(CliShow, ResolvesFramesOfABinaryOnThisMachine) {
  // A report from "another machine" whose frame in the stack job has only module + offset: the binary is here,
  // with the same build id, so show names the function and line.
  e2e::TempDir dir;
  e2e::Outcome o = e2e::run_in(dir, {STACK_JOB}, {{"LD_PRELOAD", FIRSTASSERT_SHIM}});
  ASSERT_EQ(o.reports.size(), 1u) << o.run.err;
  json report = o.report;
  json& frame = report["culprit"]["native_stack"][0];
  ASSERT_EQ(frame["module"], STACK_JOB);
  frame["function"] = nullptr;
  frame["file"] = nullptr;
  frame["line"] = nullptr;
  write(o.reports[0], report.dump());
  e2e::Run r = cli({"show", "--json", o.reports[0]}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json resolved = json::parse(r.out)["culprit"]["native_stack"][0];
  EXPECT_NE(resolved["function"].get<std::string>().find("train_step"), std::string::npos) << resolved.dump();
  EXPECT_EQ(resolved["resolved_offline"], true);
}

TEST(CliShow, BadInputsAreOneLineEachAndExitTwo) {
  e2e::TempDir dir;
  std::string truncated = e2e::read_file(kGolden + "/assert_report.json").substr(0, 500);
  write(dir.path() + "/truncated.json", truncated);
  write(dir.path() + "/foreign.json", "{\"name\": \"package.json\", \"version\": \"1.0.0\"}\n");
  write(dir.path() + "/newer.json", "{\"schema\": \"firstassert/2\"}\n");
  write(dir.path() + "/binary.json", std::string("\x7f" "ELF\x02\x01\x01\x00garbage", 16));
  struct Case {
    std::string file, message;
  } cases[] = {
      {dir.path() + "/missing.json", "no such file"},
      {dir.path() + "/truncated.json", "not valid JSON (truncated?)"},
      {dir.path() + "/foreign.json", "not a firstassert report (no \"schema\")"},
      {dir.path() + "/newer.json",
       "schema firstassert/2 is newer than this firstassert understands (firstassert/1); use a newer firstassert"},
      {dir.path() + "/binary.json", "not valid JSON (truncated?)"},
  };
  for (const Case& c : cases) {
    e2e::Run r = cli({"show", c.file}, dir.path());
    EXPECT_EQ(r.exit_code, 2) << c.file;
    EXPECT_EQ(r.err, "firstassert show: " + c.file + ": " + c.message + "\n");
    EXPECT_EQ(r.out, "");
  }
  e2e::TempDir empty;
  e2e::Run r = cli({"show", empty.path()}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "firstassert show: " + empty.path() + ": no firstassert report (firstassert-*.json) here\n");
}

// ---- merge ----------------------------------------------------------------------------------------------------

// A job of 4 ranks on two hosts: rank 2 failed first, the others after it with secondary errors.
void write_rank(const std::string& dir, int rank, const std::string& host, long long error_ns, const char* api) {
  json r = json::parse(e2e::read_file(kGolden + "/assert_report.json"));
  r["process"]["rank"] = rank;
  r["process"]["host"] = host;
  r["process"]["pid"] = 1000 + rank;
  r["first_error"]["time_ns"] = error_ns;
  r["first_error"]["api"] = api;
  if (rank != 2) r["culprit"]["kernel"] = "void ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)";
  write(dir + "/firstassert-" + host + "-" + std::to_string(1000 + rank) + ".json", r.dump());
}

TEST(CliMerge, NamesTheRankThatFailedFirst) {
  e2e::TempDir host_a, host_b;
  const long long t0 = 1796007900000000000;
  write_rank(host_a.path(), 0, "node1", t0 + 3'200'000'000, "ncclCommWatchdog");
  write_rank(host_a.path(), 1, "node1", t0 + 3'100'000'000, "cudaStreamSynchronize");
  write_rank(host_b.path(), 2, "node2", t0, "cudaMemcpyAsync");
  write_rank(host_b.path(), 3, "node2", t0 + 2'500'000'000, "cudaEventQuery");
  e2e::Run r = cli({"merge", host_a.path(), host_b.path()}, host_a.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("4 reports, 4 with an error\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("failed first: rank 2 on node2\n  cudaErrorAssert (710) at cudaMemcpyAsync\n  culprit "
                       "nll_loss_forward_reduce_cuda_kernel_2d [exact]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  +2.500 s  rank 3 on node2: cudaErrorAssert (710) at cudaEventQuery"), std::string::npos);
  EXPECT_NE(r.out.find("  +3.100 s  rank 1 on node1"), std::string::npos);
  EXPECT_NE(r.out.find("  +3.200 s  rank 0 on node1"), std::string::npos);
  EXPECT_NE(r.out.find("times compared: first_error.time_ns, the wall clocks of 2 hosts"), std::string::npos);
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << "node1 failed 3.1 s after node2: beyond a 1 s skew";

  // Within a 4 s skew the other host's first failure (3.1 s later) may really have come first; rank 3 (2.5 s, the
  // same host and clock) does not make the order uncertain.
  e2e::Run tight = cli({"merge", "--skew", "4", host_a.path(), host_b.path()}, host_a.path());
  EXPECT_NE(tight.out.find("warning: the first failures on node2 and node1 are 3.100 s apart, less than the clock "
                           "skew allowed (4 s): which host failed first is uncertain"),
            std::string::npos)
      << tight.out;
  e2e::Run loose = cli({"merge", "--skew", "3", host_a.path(), host_b.path()}, host_a.path());
  EXPECT_EQ(loose.out.find("warning"), std::string::npos) << loose.out;

  e2e::Run as_json = cli({"merge", "--json", host_a.path(), host_b.path()}, host_a.path());
  json j = json::parse(as_json.out);
  EXPECT_EQ(j["failures"][0]["rank"], 2);
  EXPECT_EQ(j["failures"][0]["role"], "first");
  EXPECT_EQ(j["failures"][3]["rank"], 0);
}

// cuda:N is each rank's own numbering (its CUDA_VISIBLE_DEVICES): ranks that failed on the same board are grouped by
// its UUID, ranks on other boards apart, and a report that names no GPU is counted, not grouped.
TEST(CliMerge, FailuresAreGroupedByThePhysicalGpu) {
  e2e::TempDir dir;
  const long long t0 = 1796007900000000000;
  auto write_on = [&](int rank, const std::string& host, long long after_ns, int ordinal, const std::string& uuid) {
    json r = json::parse(e2e::read_file(kGolden + "/assert_report.json"));
    r["process"]["rank"] = rank;
    r["process"]["host"] = host;
    r["process"]["pid"] = 1000 + rank;
    r["first_error"]["time_ns"] = t0 + after_ns;
    if (uuid.empty()) {
      r.erase("devices");  // a report written before devices were recorded
    } else {
      r["devices"][0]["ordinal"] = ordinal;
      r["devices"][0]["uuid"] = uuid;
    }
    write(dir.path() + "/firstassert-" + host + "-" + std::to_string(1000 + rank) + ".json", r.dump());
  };
  const std::string board_a = "GPU-aaaaaaaa-0000-0000-0000-000000000001";
  const std::string board_b = "GPU-bbbbbbbb-0000-0000-0000-000000000002";
  write_on(0, "node1", 0, 0, board_a);            // first
  write_on(1, "node1", 100'000'000, 0, board_b);  // cuda:0 of its own, another board
  write_on(2, "node1", 200'000'000, 1, board_a);  // the same board as rank 0, under another ordinal
  write_on(3, "node2", 300'000'000, 0, "");
  e2e::Run r = cli({"merge", dir.path()}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  gpu     cuda:0 NVIDIA H100 80GB HBM3 (" + board_a + ", PCI 00000000:1B:00.0)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("by GPU (UUID; cuda:N is each process's own numbering):\n  " + board_a +
                       " NVIDIA H100 80GB HBM3: rank 0 on node1 (cuda:0, failed first); rank 2 on node1 (cuda:1)\n  " +
                       board_b + " NVIDIA H100 80GB HBM3: rank 1 on node1 (cuda:0)\n  1 failed report(s) name no GPU "
                       "UUID\n"),
            std::string::npos)
      << r.out;
  json j = json::parse(cli({"merge", "--json", dir.path()}, dir.path()).out);
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["uuid"], board_a);
  EXPECT_EQ(j["gpus"][0]["failures"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["failures"][1]["rank"], 2);
  EXPECT_EQ(j["failures"][2]["gpu"]["ordinal"], 1);
  EXPECT_TRUE(j["failures"][3]["gpu"].is_null());
}

// A compiled culprit's rank names the model's line under the kernel.
TEST(CliMerge, ACompiledCulpritNamesTheModelsLine) {
  e2e::TempDir dir;
  json r = json::parse(e2e::read_file(kGolden + "/compiled_report.json"));
  write(dir.path() + "/firstassert-node7-1.json", r.dump());
  e2e::Run text = cli({"merge", dir.path()}, dir.path());
  EXPECT_EQ(text.exit_code, 0) << text.err;
  const json& line = r["culprit"]["compiled"]["model_lines"][0];
  std::string model = line["file"].get<std::string>() + ":" + std::to_string(line["line"].get<int>()) + ": " +
                      line["code"].get<std::string>();
  EXPECT_NE(text.out.find("  culprit " + r["culprit"]["short_name"].get<std::string>() + " [exact]\n  model   " +
                          model + "\n"),
            std::string::npos)
      << text.out;
  json j = json::parse(cli({"merge", "--json", dir.path()}, dir.path()).out);
  EXPECT_EQ(j["failures"][0]["model"], model);
}

// A culprit whose report holds no kernel name is named for what it is: a graph's launch, or a kernel not known.
TEST(CliMerge, ANamelessCulpritIsAGraphOnlyWhenItsLaunchWasOne) {
  for (bool graph : {false, true}) {
    e2e::TempDir dir;
    json r = json::parse(e2e::read_file(kGolden + "/assert_report.json"));
    r["culprit"].erase("kernel");
    r["culprit"].erase("mangled");
    r["culprit"].erase("short_name");
    r["culprit"]["graph"] = graph;
    write(dir.path() + "/firstassert-node1-1000.json", r.dump());
    e2e::Run run = cli({"merge", dir.path()}, dir.path());
    EXPECT_EQ(run.exit_code, 0) << run.err;
    std::string named = graph ? "culprit (CUDA graph) [" : "culprit (unknown kernel) [";
    EXPECT_NE(run.out.find(named), std::string::npos) << run.out;
  }
}

TEST(CliMerge, BadFilesAreReportedAndTheRestStillMerged) {
  e2e::TempDir dir, empty;
  const long long t0 = 1796007900000000000;
  write_rank(dir.path(), 2, "node2", t0, "cudaMemcpyAsync");
  write_rank(dir.path(), 0, "node2", t0 + 1'000'000'000, "cudaLaunchKernel");
  write(dir.path() + "/firstassert-node9-1.json", "{\"schema\": \"firstassert/1\", \"process\": ");
  e2e::Run r = cli({"merge", dir.path(), empty.path(), "/nonexistent/dir"}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("firstassert merge: " + dir.path() + "/firstassert-node9-1.json: not valid JSON (truncated?)\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("firstassert merge: " + empty.path() + ": no firstassert report (firstassert-*.json) here\n"),
            std::string::npos);
  EXPECT_NE(r.err.find("firstassert merge: /nonexistent/dir: no such directory\n"), std::string::npos);
  EXPECT_NE(r.out.find("failed first: rank 2 on node2"), std::string::npos) << r.out;
}

TEST(Cli, UsageAndUnknownCommands) {
  e2e::TempDir dir;
  e2e::Run help = cli({"--help"}, dir.path());
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("firstassert run"), std::string::npos);
  e2e::Run unknown = cli({"frobnicate"}, dir.path());
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err, "firstassert: unknown command 'frobnicate' (run, lib, show, merge, triage; see firstassert --help)\n");
  for (const char* command : {"run", "lib", "show", "merge", "triage"}) {
    e2e::Run h = cli({command, "--help"}, dir.path());
    EXPECT_EQ(h.exit_code, 0) << command;
    EXPECT_NE(h.out.find(std::string("usage: firstassert ") + command), std::string::npos) << command << h.out;
  }
}

}  // namespace
