/* tests/kernel/shim (see linux/types.h): branch hints. */
#ifndef KSHIM_LINUX_COMPILER_H
#define KSHIM_LINUX_COMPILER_H

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#endif
