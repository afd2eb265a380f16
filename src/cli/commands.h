// The firstassert command's subcommands. Each takes its own arguments (after the subcommand's name), writes what it
// has to say to out and its one-line errors to err, and returns the process exit status.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace firstassert::cli {

using Args = std::vector<std::string>;

int run_command(const Args& args, std::ostream& out, std::ostream& err, const std::string& self_path);
// `firstassert lib`: the libfirstassert.so to put in LD_PRELOAD, as run would preload it.
int lib_command(const Args& args, std::ostream& out, std::ostream& err, const std::string& self_path);
int show_command(const Args& args, std::ostream& out, std::ostream& err);
int merge_command(const Args& args, std::ostream& out, std::ostream& err);
int triage_command(const Args& args, std::ostream& out, std::ostream& err);
// `firstassert --version`: the tool's, the CUDA it was built against, and the PyTorch of the python3 on PATH.
int version_command(std::ostream& out);

// Exit status for bad usage or bad input files (the others are still read).
inline constexpr int kBadInput = 2;

}  // namespace firstassert::cli
