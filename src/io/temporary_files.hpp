// The temporary files that atomic writes go through, and what becomes of them
// when a run is interrupted: an interrupted run leaves none behind, and a run
// that writes where a killed one left one removes it.
//
// Every writer names its temporary file "<final>.tmp-<pid>" (NIfTI: a hidden
// ".<final>.tmp-<pid>.nii"), registers it while it exists and releases it once
// renamed or removed. SIGINT, SIGTERM and SIGHUP remove every registered
// file, then end the process as the signal would have (so the exit status
// says which signal), unless the process was started with the signal ignored
// (nohup, a background job), which it keeps; SIGXFSZ is ignored, so that a write past a file-size
// limit fails and ends the run with a message, as a full disk does. mpirun forwards SIGINT and
// SIGTERM to every rank, and sends SIGTERM to the others when one rank dies, so every rank
// registers the shared temporary file it writes to.
#pragma once

#include <string>
#include <vector>

namespace larmor::io {

// Installs the handlers (once; later calls do nothing).
void remove_temporaries_on_interrupt();

// While registered, `path` is removed if the process is interrupted.
void register_temporary(const std::string& path);
void release_temporary(const std::string& path);

// The leftovers of interrupted runs beside `final_path`: temporary files of
// its name whose process no longer exists. Removes them and returns their
// paths (for the caller to report).
std::vector<std::string> remove_stale_temporaries(const std::string& final_path);

// Refuses (std::invalid_argument, starting with `what`: the option or deck
// key that named it) an output larmor cannot write or must not replace,
// before any work: an empty path, one ending in '/', a folder, anything that
// exists and is not a regular file (a device, FIFO or socket: results are
// written to a temporary file and renamed into place, which would replace
// it), and a folder this user cannot write in.
void check_output_path(const std::string& output, const std::string& what);

// Makes the folders an output path goes to; the reason it could not, naming
// the path and the folder, or "" when they exist.
std::string make_output_folder(const std::string& output);

// check_output_path, and refuses (naming both) an output that is one of the
// run's inputs: the same file, however its path is spelt (links included).
// `inputs` may name files that do not exist; they cannot be the output.
void refuse_output_over_inputs(const std::string& output, const std::vector<std::string>& inputs,
                               const std::string& what);

// A seam for the fault tests, null in larmor itself: when set, every rank
// calls it once an output's temporary file is complete, before the rename
// that puts it in place (tests/faults/fault_seams.cpp holds the file there
// so that a test can interrupt the run while it exists).
extern void (*before_output_rename)();

}  // namespace larmor::io
