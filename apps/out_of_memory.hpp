// What `troupe` does when memory runs out: one line on stderr, "troupe: out of memory while
// <phase>", and exit status 3 (README.md, "Exit status") — never an abort without a word.
//
// Contract: InstallOutOfMemoryHandler makes a failed allocation on any thread (main's, or one of
// CAF's actor threads, where an exception escaping would call std::terminate) print that line and
// _exit(kOutOfMemoryExit) at once: nothing is flushed or written after it; so does a
// std::bad_alloc or std::length_error that escapes a thread. SetPhase names what the
// process is building now; main sets it as a command moves on. OutOfMemory prints the line for
// what main catches itself (std::bad_alloc, std::length_error: a size past what can be held).
#pragma once

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>

namespace troupe {

inline constexpr int kOutOfMemoryExit = 3;

// A string literal: read by the handler without allocating.
inline std::atomic<const char*> current_phase{"starting"};

inline void SetPhase(const char* phase) { current_phase.store(phase); }

// Async-signal-safe: write(2) only, no allocation.
inline int OutOfMemory() {
  const char* parts[] = {"troupe: out of memory while ", current_phase.load(), "\n"};
  for (const char* part : parts) {
    if (::write(STDERR_FILENO, part, std::strlen(part)) < 0) break;
  }
  return kOutOfMemoryExit;
}

inline std::terminate_handler previous_terminate = nullptr;

// A std::length_error (or a bad_alloc not thrown by operator new) that escapes a thread.
[[noreturn]] inline void TerminateOnOutOfMemory() {
  if (std::exception_ptr escaped = std::current_exception()) {
    try {
      std::rethrow_exception(escaped);
    } catch (const std::bad_alloc&) {
      ::_exit(OutOfMemory());
    } catch (const std::length_error&) {
      ::_exit(OutOfMemory());
    } catch (...) {
    }
  }
  if (previous_terminate != nullptr) previous_terminate();
  std::abort();
}

// mimalloc, linked into troupe where it is installed (apps/CMakeLists.txt), aborts on a failed
// `new` without asking std::new_handler; its error hook runs first. Weak: absent without it.
extern "C" void mi_register_error(void (*handler)(int error, void* arg), void* arg)
    __attribute__((weak));

inline void InstallOutOfMemoryHandler() {
  std::set_new_handler([] { ::_exit(OutOfMemory()); });
  previous_terminate = std::set_terminate(TerminateOnOutOfMemory);
  if (mi_register_error != nullptr) {
    mi_register_error(
        [](int error, void*) {
          if (error == ENOMEM) ::_exit(OutOfMemory());
        },
        nullptr);
  }
}

}  // namespace troupe
