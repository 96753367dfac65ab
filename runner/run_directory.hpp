// Writing a run directory all at once: every kind of run (cluster, parameter server, OASiS) stages
// its files in `<out_dir>.tmp-<pid>` and then renames that folder onto out_dir, so a failed run
// leaves no half-written output: every write is checked, and a run that fails (a full disk
// included) removes its staging folder. Each file is named in the staging folder's marker before
// it is written, so that the folder of a run killed at any moment is troupe's and the next run
// beside it removes it (runner/output_folder.hpp). An existing out_dir is replaced only when
// troupe wrote it: it is set aside first and restored if the rename fails. Anything else at
// out_dir is refused, never replaced.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/status.hpp"

namespace troupe {

struct NamedFile {
  std::string name;  // inside the run directory
  std::string content;
};

// InvalidInput unless troupe may write its run directory at out_dir (CheckOutputFolder).
Status CheckRunDirectory(const std::string& out_dir);

// The staging folder of out_dir. A run may put large outputs there before committing (the
// parameter server keeps its SSD-PS files in it).
std::string StagingDirectory(const std::string& out_dir);

// Creates out_dir's staging folder (marked as troupe's), first removing the staging folders of
// dead troupe processes beside out_dir. For runs that stage large outputs before committing.
Status PrepareStagingDirectory(const std::string& out_dir);

// Writes one file into out_dir's staging folder (created and marked if it is not there yet) piece
// by piece, so that a large file (a million-row CSV) is never held whole in memory: `next` fills
// `chunk` (emptied before each call) and returns false once it has nothing more to give. The file
// enters out_dir with CommitRunDirectory. On failure the staging folder is removed and the error
// names the path.
Status StageFile(const std::string& out_dir, const std::string& name,
                 const std::function<bool(std::string* chunk)>& next);

// Writes `content` to `folder`/`name`, naming it in the folder's marker first (the folder has one)
// so that the folder stays troupe's while the file is written. Every write is checked; on failure
// the file is removed and the error names its path.
Status WriteOutputFile(const std::string& folder, const std::string& name,
                       const std::string& content);

// Writes `files` into the staging folder (created with its parents; what a run already staged
// there is kept) and moves it onto out_dir. On failure the staging folder is removed.
Status CommitRunDirectory(const std::string& out_dir, const std::vector<NamedFile>& files);

// A field of a run directory's CSV files: as it is, or in double quotes (inner quotes doubled)
// when it holds a comma, a quote or a line break.
std::string CsvField(const std::string& text);
// The same field appended to `out`, without a string of its own.
void AppendCsvField(const std::string& text, std::string* out);

}  // namespace troupe
