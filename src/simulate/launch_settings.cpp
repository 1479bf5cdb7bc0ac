#include "simulate/launch_settings.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace larmor::simulate {

namespace {
std::string variable(const char* name) {
  const char* text = std::getenv(name);
  return text != nullptr ? text : "";
}

// `text` among `allowed`, else refused naming the variable (and the kernel
// that reads it, as the kernels' own messages do).
void check_member(const std::string& who, const char* name, const std::string& text,
                  std::initializer_list<const char*> allowed, const char* expected) {
  for (const char* a : allowed) {
    if (text == a) return;
  }
  throw std::invalid_argument(who + name + "='" + text + "' is not " + expected);
}
}  // namespace

LaunchSettings LaunchSettings::from_environment() {
  LaunchSettings s;
  if (const std::string layout = variable("LARMOR_EPG_LAYOUT"); !layout.empty()) {
    int opt = 0, lanes = 0;
    char tail = 0;
    if (std::sscanf(layout.c_str(), "%dx%d%c", &opt, &lanes, &tail) != 2 || opt < 1 || lanes < 1) {
      throw std::invalid_argument("larmor::epg::forward: LARMOR_EPG_LAYOUT='" + layout +
                                  "' is not of the form OPTxLANES");
    }
    s.kernels.orders_per_thread = opt;
    s.kernels.lanes = lanes;
  }
  if (const std::string scalar = variable("LARMOR_REAL_SCALAR"); !scalar.empty()) {
    check_member("larmor::epg: ", "LARMOR_REAL_SCALAR", scalar, {"0", "1"}, "0 or 1");
    s.kernels.real_scalar = scalar == "1";
  }
  if (const std::string adjoint = variable("LARMOR_ADJOINT_LAYOUT"); !adjoint.empty()) {
    check_member("larmor::epg::adjoint: ", "LARMOR_ADJOINT_LAYOUT", adjoint, {"plain", "grouped"},
                 "plain or grouped");
    s.kernels.plain_adjoint = adjoint == "plain";
  }
  if (const std::string train = variable("LARMOR_EPG_TRAIN"); !train.empty()) {
    check_member("larmor::epg: ", "LARMOR_EPG_TRAIN", train, {"auto", "on", "off"},
                 "auto, on or off");
    s.kernels.train = train == "on"    ? epg::LaunchOptions::Train::on
                      : train == "off" ? epg::LaunchOptions::Train::off
                                       : epg::LaunchOptions::Train::automatic;
  }
  if (const std::string trim = variable("LARMOR_TRIM_ORDERS"); !trim.empty()) {
    check_member("", "LARMOR_TRIM_ORDERS", trim, {"on", "off"}, "on or off");
    s.trim_orders = trim == "on";
  }
  if (const std::string path = variable("LARMOR_REAL_PATH"); !path.empty()) {
    check_member("", "LARMOR_REAL_PATH", path, {"auto", "on", "off"}, "auto, on or off");
    s.real_path = path == "off" ? RealPathMode::off
                                : (path == "on" ? RealPathMode::on : RealPathMode::automatic);
  }
  return s;
}

}  // namespace larmor::simulate
