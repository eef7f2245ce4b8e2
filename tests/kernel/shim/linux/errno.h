/* tests/kernel/shim (see linux/types.h): error numbers, the system's
 * <linux/errno.h> (the same values as the kernel's). */
#include_next <linux/errno.h>
