// The end of a command-line tool's main: parse, run, and turn failures into one line and exit
// code 2 (bad input of any kind), as the README promises.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

namespace cohort {

// Parses argv into `app` (--help exits 0, a parse error 2), then returns run()'s exit code; an
// exception from run() prints "TOOL: what" to stderr after what stdout holds, and exits 2.
template <typename Run>
int ParseAndRun(CLI::App& app, int argc, char** argv, const char* tool, Run&& run) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    return run();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: %s\n", tool, e.what());
    return 2;
  }
}

}  // namespace cohort
