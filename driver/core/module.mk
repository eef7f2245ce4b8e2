# driver/core/module.mk - extra build rules of libloom_core.a.
#
# The host kernels (driver/core/kernels_*.c and the GEMM they share) are compiled with -O3: GCC's
# -O2 vectorizes only loops whose trip count is a known multiple of the
# vector width, and the kernels' inner loops (elementwise, GEMM panels,
# reductions) have run-time lengths.  -O3 adds no fast-math: results are the
# same as at -O2, bit for bit.
$(BUILD)/obj/driver/core/kernels_%.o: CFLAGS += -O3
$(BUILD)/obj/driver/core/kernel_gemm.o: CFLAGS += -O3
# The integer approximations' row loops (QSOFTMAX, QLAYERNORM): -O3 vectorizes
# the row sums; the results are integers, the same at any level.
$(BUILD)/obj/driver/core/intapprox.o: CFLAGS += -O3
