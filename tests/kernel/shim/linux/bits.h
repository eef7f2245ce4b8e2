/* tests/kernel/shim (see linux/types.h): BIT(). */
#ifndef KSHIM_LINUX_BITS_H
#define KSHIM_LINUX_BITS_H

#define BIT(n) (1ul << (n))

#endif
