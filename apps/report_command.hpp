// `troupe report RUN_DIR... [--out DIR]`: figures and one self-contained report.html from run
// directories, drawn by scripts/plot.py (matplotlib, pandas).
//
// Contract:
//  - RunReport runs `PYTHON -B PLOT_PY --out OUT -- RUN_DIR...` as a child process (posix_spawn,
//    no shell; it inherits stdin, stdout and stderr) and returns its exit status: 0 the report was
//    written, 2 bad input (plot.py printed one line naming the file, and line where it can, and
//    wrote nothing), 1 anything else (a child killed by a signal also gives 1). On success it
//    prints "report: OUT/report.html" on stdout.
//  - OUT is out_dir, or `<first run dir>/report` when out_dir is empty.
//  - PLOT_PY is TROUPE_SOURCE_DIR/scripts/plot.py (the source tree the binary was built from) or,
//    where that is gone, scripts/plot.py under the current directory; neither: 1, with a message.
//  - PYTHON is $TROUPE_PYTHON when set, else /usr/bin/python3 where it exists (the interpreter
//    Debian's python3-matplotlib and python3-pandas install into, even when a pyenv or virtualenv
//    python3 comes first on PATH), else python3 looked up on PATH.
#pragma once

#include <string>
#include <vector>

namespace troupe {

int RunReport(const std::vector<std::string>& run_dirs, const std::string& out_dir);

}  // namespace troupe
