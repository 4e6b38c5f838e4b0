// The end of a command-line tool's main: parse, run, and turn failures into one line and exit
// code 2 (bad input of any kind), as the README promises; or the parsing alone, for tools that
// end their own way.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <optional>

#include "base/error.h"

namespace cohort {

// Parses argv into `app`. Returns the exit code when the tool is to stop here (--help: 0, after
// CLI11 printed it; a parse error: 2, after its message), nothing when it is to run.
inline std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return std::nullopt;
}

// Parses argv into `app` (ParseCommandLine), then returns run()'s exit code; an exception from
// run() prints "TOOL: message" to stderr after what stdout holds (a cohort::Error without its
// source line, as cohort-train prints), and exits 2.
template <typename Run>
int ParseAndRun(CLI::App& app, int argc, char** argv, const char* tool, Run&& run) {
  if (const std::optional<int> stop = ParseCommandLine(app, argc, argv)) return *stop;
  try {
    return run();
  } catch (const Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: %s\n", tool, e.message().c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: %s\n", tool, e.what());
    return 2;
  }
}

}  // namespace cohort
