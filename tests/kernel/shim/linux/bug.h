/* tests/kernel/shim (see linux/types.h): WARN_ONCE fails the test. */
#ifndef KSHIM_LINUX_BUG_H
#define KSHIM_LINUX_BUG_H

#include <stdio.h>
#include <stdlib.h>

#define WARN_ONCE(cond, fmt, ...)                                         \
  ({                                                                      \
    int kshim_c_ = !!(cond);                                              \
    if (kshim_c_) {                                                       \
      fprintf(stderr, "WARNING: " fmt "\n", ##__VA_ARGS__);               \
      abort();                                                            \
    }                                                                     \
    kshim_c_;                                                             \
  })

#endif
