// Asks the allocator to back the heap with 2 MiB pages from now on.
//
// A round of a large cluster reads thousands of job entries spread over hundreds of megabytes of
// heap: on 4 KiB pages many of them cost a page walk too, up to a quarter of the million-job
// stream's time (docs/performance.md, "Huge pages, prefetches, no lookups"). With 2 MiB pages the
// same entries fit the TLB. Small runs keep 4 KiB pages: a 2 MiB page is resident whole, which a
// run of a few megabytes would feel.
//
// Only mimalloc (linked into the troupe program, not the tests or the sanitizer builds) offers
// this; elsewhere PreferHugePages does nothing and says so.
#pragma once

#if __has_include(<mimalloc.h>)
#include <mimalloc.h>
// Weak: a binary linked without mimalloc resolves it to null.
#pragma weak mi_option_set
#define TROUPE_MIMALLOC_HEADER 1
#endif

namespace troupe {

// True when the allocator took the request (the process runs on mimalloc).
inline bool PreferHugePages() {
#ifdef TROUPE_MIMALLOC_HEADER
  if (&mi_option_set == nullptr) return false;
  mi_option_set(mi_option_large_os_pages, 1);
  return true;
#else
  return false;
#endif
}

}  // namespace troupe
