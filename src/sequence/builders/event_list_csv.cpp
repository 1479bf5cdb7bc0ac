#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sequence/builders/event_list.hpp"

namespace larmor::sequence {

namespace {

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) cells.push_back(trimmed(cell));
  if (!line.empty() && line.back() == ',') cells.emplace_back();  // a trailing empty cell
  return cells;
}

}  // namespace

std::vector<ListedEvent> read_event_list_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open the event list");
  std::vector<std::string> columns;
  std::vector<ListedEvent> events;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string content = trimmed(line);
    if (content.empty() || content[0] == '#') continue;
    const std::string at = path + ":" + std::to_string(line_no) + ": ";
    if (columns.empty()) {
      // The first line names the columns.
      columns = cells_of(content);
      bool has_event = false;
      for (std::size_t c = 0; c < columns.size(); ++c) {
        const std::string& name = columns[c];
        const auto& keys = listed_event_keys();
        if (name == "event") {
          has_event = true;
        } else if (std::find(keys.begin(), keys.end(), name) == keys.end()) {
          throw std::runtime_error(at + "column " + std::to_string(c + 1) + " ('" + name +
                                   "') is not a column of an event list (event, flip_deg, "
                                   "phase_deg, duration_ms, count, b1_scaled)");
        }
        for (std::size_t k = 0; k < c; ++k) {
          if (columns[k] == name) throw std::runtime_error(at + "column '" + name + "' twice");
        }
      }
      if (!has_event) {
        throw std::runtime_error(at +
                                 "the header line needs an 'event' column (and names the "
                                 "others: flip_deg, phase_deg, duration_ms, count, "
                                 "b1_scaled)");
      }
      continue;
    }
    const std::vector<std::string> cells = cells_of(content);
    if (cells.size() != columns.size()) {
      throw std::runtime_error(at + "expected " + std::to_string(columns.size()) +
                               " columns (as the header names), found " +
                               std::to_string(cells.size()));
    }
    ListedEvent e;
    e.where = path + ":" + std::to_string(line_no);
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (columns[c] == "event" && !listed_event_type(cells[c], e.type)) {
        throw std::runtime_error(at + "event '" + cells[c] +
                                 "' is not an event type (pulse, wait, shift, spoil, sample)");
      }
    }
    const char* required = listed_event_required_key(e.type);
    bool required_seen = required == nullptr;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const std::string& key = columns[c];
      const std::string& cell = cells[c];
      if (key == "event" || cell.empty()) continue;
      if (!listed_event_takes(e.type, key)) {
        throw std::runtime_error(at + key + " ('" + cell + "'): a " + listed_event_name(e.type) +
                                 " event takes no " + key + " (leave the cell empty)");
      }
      if (required != nullptr && key == required) required_seen = true;
      if (key == "b1_scaled") {
        if (cell != "true" && cell != "false") {
          throw std::runtime_error(at + "b1_scaled ('" + cell + "') must be true or false");
        }
        e.b1_scaled = cell == "true";
        continue;
      }
      std::size_t used = 0;
      double v = 0.0;
      try {
        v = std::stod(cell, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != cell.size() || !std::isfinite(v)) {
        throw std::runtime_error(at + key + " ('" + cell + "') is not a finite number");
      }
      if (key == "count") {
        if (v != std::floor(v) || v < 1 || v > 1e9) {
          throw std::runtime_error(at + "count ('" + cell + "') must be a whole number >= 1");
        }
        e.count = int(v);
      } else if (key == "flip_deg") {
        e.flip_deg = v;
      } else if (key == "phase_deg") {
        e.phase_deg = v;
      } else {
        e.duration_s = v * 1e-3;
      }
    }
    if (!required_seen) {
      throw std::runtime_error(at + "a " + std::string(listed_event_name(e.type)) +
                               " event needs " + required);
    }
    const std::string problem = listed_event_problem(e);
    if (!problem.empty()) throw std::runtime_error(at + problem);
    events.push_back(e);
  }
  if (events.empty()) throw std::runtime_error(path + ": the event list has no events");
  return events;
}

}  // namespace larmor::sequence
