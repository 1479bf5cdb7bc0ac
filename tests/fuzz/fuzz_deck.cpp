// libFuzzer target for the input deck reader: any text is either read as a
// deck or refused with a DeckError (which names the file and line); anything
// else (another exception, a crash, a sanitizer report, toml++ reaching
// undefined behaviour) is a finding. Built with clang by
// tests/fuzz/CMakeLists.txt and run for a bounded time by CTest; findings go
// to tests/data/deck-fuzz-regressions, which the GoogleTest suite replays.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "app/deck.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The reader takes a path (decks name files relative to their folder).
  static const std::string path = "/tmp/larmor-fuzz-deck-" + std::to_string(::getpid()) + ".toml";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    (void)larmor::app::read_deck(path);
  } catch (const larmor::app::DeckError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_deck: not a DeckError: %s\n", e.what());
    std::abort();
  }
  return 0;
}
