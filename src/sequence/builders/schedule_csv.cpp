#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "sequence/builders/builders.hpp"

namespace larmor::sequence {

std::vector<MrfRow> read_mrf_schedule_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open the schedule file");
  std::vector<MrfRow> rows;
  std::string line;
  int line_no = 0;
  bool header_seen = false;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (!header_seen) {
      header_seen = true;  // the first non-empty line names the columns
      continue;
    }
    double v[4];
    std::stringstream ss(line);
    std::string cell;
    int col = 0;
    while (std::getline(ss, cell, ',')) {
      if (col >= 4) {
        throw std::runtime_error(path + ":" + std::to_string(line_no) + ": more than 4 columns");
      }
      std::size_t used = 0;
      try {
        v[col] = std::stod(cell, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || cell.find_first_not_of(" \t", used) != std::string::npos ||
          !std::isfinite(v[col])) {
        throw std::runtime_error(path + ":" + std::to_string(line_no) + ": column " +
                                 std::to_string(col + 1) + " ('" + cell +
                                 "') is not a finite number");
      }
      ++col;
    }
    if (col != 4) {
      throw std::runtime_error(path + ":" + std::to_string(line_no) +
                               ": expected 4 columns, found " + std::to_string(col));
    }
    rows.push_back(MrfRow{v[0], v[1], v[2] * 1e-3, v[3] * 1e-3});
  }
  if (rows.empty()) throw std::runtime_error(path + ": the schedule has no rows");
  return rows;
}

std::string format_mrf_schedule_csv(const std::vector<MrfRow>& rows) {
  std::string out =
      "flip_angle_(fraction_of_nominal),rf_phase_(deg),extension_of_base_TR_(ms),"
      "extension_of_base_TE_(ms)\n";
  char line[160];
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line, "%.9g,%.9g,%.9g,%.9g\n", r.flip_fraction, r.rf_phase_deg,
                  r.tr_extension_s * 1e3, r.te_extension_s * 1e3);
    out += line;
  }
  return out;
}

}  // namespace larmor::sequence
