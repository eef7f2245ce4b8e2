# Loom top-level build.
#
#   make              build the libraries, the loom CLI and the test programs
#   make test         the default test suite (what CI runs)
#   make demo         compile the digits CNN and run it on the Verilator RTL
#   make bench-fsim   fsim throughput benchmark (tests/bench/module.mk)
#   make check-docs   the generated tables in docs/ match hw/spec/*.def
#   make install PREFIX=/usr/local   bin/loom, lib/libloom.so, include/loom,
#                     lib/pkgconfig/loom.pc, the man page, the Python package
#   make SAN=1 ...    build with AddressSanitizer and UBSan (into build-san/)
#
# Sources are found by directory, one archive per layer (imports only go
# down: include -> driver/core -> sw_compiler, sim -> driver/lib -> driver/cli):
#   driver/core/*.c        libloom_core.a  the contract: ISA codec, configs,
#                                          .loom, .npy, host-op semantics
#   sw_compiler/*.c        libloomc.a      the compiler
#   sim/fsim/*.c           (in libloom.a)  the functional simulator
#   driver/lib/*.c         libloom.a       the runtime; the archive also holds
#                                          core and fsim, so a program that
#                                          runs models links libloom.a alone
#                          libloom.so.V    the same objects built -fPIC, with
#                                          only the API of include/loom/*.h
#                                          exported (soname libloom.so.MAJOR)
#   driver/cli/*.c         the `loom` binary
# and every tests/unit/test_*.c becomes one cmocka test program.  Components with extra
# rules (generated code, Verilator) add them in their own module.mk.

ifeq ($(SAN),1)
BUILD ?= build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD ?= build
SANFLAGS :=
endif

CC ?= cc
CXX ?= c++
OPT ?= -O2
CPPFLAGS += -Iinclude -I$(BUILD)/gen -I. -D_GNU_SOURCE
CFLAGS += -std=c11 $(OPT) -g -Wall -Wextra -Werror -Wno-unused-parameter $(SANFLAGS)
LDFLAGS += $(SANFLAGS)
LDLIBS += -lcrypto -lz -lm

# The version, written once: VERSION.  libloom.so's soname is
# libloom.so.MAJOR; loom --version, loom_version() and loom.pc say it too.
LOOM_VERSION := $(shell cat VERSION)
LOOM_SOVERSION := $(firstword $(subst ., ,$(LOOM_VERSION)))

GEN := $(BUILD)/gen
GEN_HEADERS := $(GEN)/loom_isa_gen.h $(GEN)/loom_isa.vh $(GEN)/loom_version.h
GEN_SOURCES := $(GEN)/loom_isa_gen.c
LOOMGEN := $(BUILD)/tools/loomgen
LOOMSTA := $(BUILD)/tools/loomsta
SPEC := $(wildcard hw/spec/*.def)

LIBLOOM_CORE_SRCS := $(wildcard driver/core/*.c)
LIBLOOM_SRCS := $(wildcard driver/lib/*.c sim/fsim/*.c)
LIBLOOMC_SRCS := $(wildcard sw_compiler/*.c)
CLI_SRCS := $(wildcard driver/cli/*.c)
UNIT_TEST_SRCS := $(wildcard tests/unit/test_*.c)
TEST_SUPPORT_SRCS := $(wildcard tests/support/*.c)
RANDSTREAM_SRCS := $(wildcard tests/support/randstream*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
LIBLOOM_CORE := $(BUILD)/libloom_core.a
LIBLOOM := $(BUILD)/libloom.a
LIBLOOMC := $(BUILD)/libloomc.a
LIBLOOM_SO := $(BUILD)/libloom.so.$(LOOM_VERSION)
LOOM := $(BUILD)/bin/loom

# module.mk fragments may append to the variables above and add rules.
-include $(wildcard */module.mk */*/module.mk)

UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_TEST_SRCS))

.PHONY: all deps test test-programs demo check-docs gen clean
.DEFAULT_GOAL := all

all: $(LOOM) $(LIBLOOM_SO) $(UNIT_TESTS) $(LOOMSTA)

deps:
	@scripts/install-deps.sh

gen: $(GEN_HEADERS) $(GEN_SOURCES)

# loomgen derives the configurations with the runtime's own rules (hwconfig_rules.c).
LOOMGEN_SRCS := $(wildcard scripts/loomgen*.c) driver/core/hwconfig_rules.c

$(LOOMGEN): $(LOOMGEN_SRCS) scripts/loomgen.h include/loom/hwconfig_rules.h $(SPEC) bitstreams/boards.def
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O1 -Wall -Wextra -Werror -I. -Iinclude -o $@ $(LOOMGEN_SRCS) -lz

$(GEN)/loom_isa_gen.h: $(LOOMGEN)
	@mkdir -p $(GEN)
	$(LOOMGEN) c-header $@

$(GEN)/loom_isa_gen.c: $(LOOMGEN)
	@mkdir -p $(GEN)
	$(LOOMGEN) c-source $@

$(GEN)/loom_version.h: VERSION
	@mkdir -p $(GEN)
	@printf '/* Generated from VERSION by the Makefile. Do not edit. */\n#define LOOM_VERSION "%s"\n' \
	  "$(LOOM_VERSION)" > $@

$(GEN)/loom_isa.vh: $(LOOMGEN)
	@mkdir -p $(GEN)
	$(LOOMGEN) verilog $(GEN)
	$(LOOMGEN) tcl $(GEN)

$(BUILD)/obj/%.o: %.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

LIBLOOM_CORE_OBJS = $(call obj,$(LIBLOOM_CORE_SRCS) $(GEN_SOURCES:$(BUILD)/%=%))

$(LIBLOOM_CORE): $(LIBLOOM_CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(LIBLOOM): $(call obj,$(LIBLOOM_SRCS)) $(LIBLOOM_CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# ---- libloom.so: the runtime as a shared library ----
#
# The objects of libloom.a again, compiled -fPIC into $(BUILD)/pic/.  The
# version script exports exactly the functions and tables that the public
# headers (include/loom/*.h, loom_isa_gen.h) declare and the objects
# define (scripts/libloom-symbols.sh); everything else stays inside.
picobj = $(patsubst %.c,$(BUILD)/pic/%.o,$(1))
LIBLOOM_PIC_OBJS = $(call picobj,$(LIBLOOM_SRCS) $(LIBLOOM_CORE_SRCS)) $(BUILD)/pic/gen/loom_isa_gen.o
LIBLOOM_SO_LIBS := -lcrypto -lz -lm -ldl
PUBLIC_HEADERS := $(wildcard include/loom/*.h) $(GEN)/loom_isa_gen.h

$(BUILD)/pic/%.o: %.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -MMD -MP -c -o $@ $<

$(BUILD)/pic/gen/%.o: $(GEN)/%.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -MMD -MP -c -o $@ $<

$(BUILD)/libloom.map: $(LIBLOOM_PIC_OBJS) $(PUBLIC_HEADERS) scripts/libloom-symbols.sh
	scripts/libloom-symbols.sh "$(CC)" $(GEN) $(LIBLOOM_PIC_OBJS) > $@.tmp
	mv $@.tmp $@

$(LIBLOOM_SO): $(LIBLOOM_PIC_OBJS) $(BUILD)/libloom.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libloom.so.$(LOOM_SOVERSION) \
	  -Wl,--version-script,$(BUILD)/libloom.map -Wl,--no-undefined -o $@ $(LIBLOOM_PIC_OBJS) \
	  $(LIBLOOM_SO_LIBS)
	ln -sf $(notdir $@) $(BUILD)/libloom.so.$(LOOM_SOVERSION)
	ln -sf libloom.so.$(LOOM_SOVERSION) $(BUILD)/libloom.so

# The generated source lives in $(GEN); compile it from there.
$(BUILD)/obj/gen/%.o: $(GEN)/%.c $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(LIBLOOMC): $(call obj,$(LIBLOOMC_SRCS)) $(LIBLOOMC_EXTRA_OBJS)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(LOOM): $(call obj,$(CLI_SRCS)) $(LIBLOOMC) $(LIBLOOM)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(call obj,$(CLI_SRCS)) $(LIBLOOMC) $(LIBLOOM) $(LOOM_EXTRA_LIBS) $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(call obj,$(TEST_SUPPORT_SRCS)) $(LIBLOOMC) $(LIBLOOM) $(GEN_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/support $(CFLAGS) $(LDFLAGS) -o $@ $< $(call obj,$(TEST_SUPPORT_SRCS)) \
	  $(LIBLOOMC) $(LIBLOOM) $(LOOM_EXTRA_LIBS) -lcmocka $(LDLIBS)

# SCRIPT_TESTS: executables (scripts or programs) run after the unit tests;
# module.mk files append to it and list in TEST_DEPS what must be built
# first.  A test program that is itself built (a path under $(BUILD)) is a
# dependency already and need not be repeated in TEST_DEPS.  Each is run
# from the top directory with LOOM and BUILD in the environment
# (tests/README.md).
test-programs: $(UNIT_TESTS) $(LOOM) $(TEST_DEPS) $(filter $(BUILD)/%,$(SCRIPT_TESTS))
	@LOOM=$(LOOM) BUILD=$(BUILD) scripts/run-tests.sh $(UNIT_TESTS) $(SCRIPT_TESTS)

test: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory check-docs
	@$(MAKE) --no-print-directory lint
	@$(MAKE) --no-print-directory test-programs

# The README's main job: digits CNN compiled to int8 and run on the Verilator RTL.
demo: deps
	@$(MAKE) --no-print-directory $(LOOM) tsim CONFIG=default
	@BUILD=$(BUILD) scripts/demo.sh

check-docs: $(LOOMGEN)
	@scripts/check-docs.sh $(LOOMGEN)

# ---- make install ----
#
#   make install [PREFIX=/usr/local] [DESTDIR=] [PYTHON=/usr/bin/python3] [PYTHONDIR=]
#
# PREFIX/bin/loom, PREFIX/lib/libloom.so.V (and the .so.MAJOR and .so
# links), PREFIX/include/loom/ (the public headers and the generated
# loom_isa_gen.h they include), PREFIX/lib/pkgconfig/loom.pc,
# PREFIX/share/man/man1/loom.1 (made from `loom help`), and the Python
# package `loom` (driver/python/loom, no compilation) in PYTHONDIR, by
# default PREFIX/lib/pythonX.Y/dist-packages (site-packages where the
# interpreter has no dist-packages), with the library's path written into
# loom/_install.py.  DESTDIR is prepended to every path (packaging).
PREFIX ?= /usr/local
PYTHON ?= /usr/bin/python3
PYTHONDIR ?= $(PREFIX)/$(shell $(PYTHON) -c 'import sys; v = "%d.%d" % sys.version_info[:2]; \
  d = "dist-packages" if any(p.endswith("dist-packages") for p in sys.path) else "site-packages"; \
  print("lib/python%s/%s" % (v, d))' 2>/dev/null || echo lib/python3/site-packages)
PYTHON_SRCS := $(wildcard driver/python/loom/*.py)
LOOM_MAN := $(BUILD)/man/loom.1

$(LOOM_MAN): $(LOOM) scripts/gen-man.sh VERSION
	@mkdir -p $(dir $@)
	scripts/gen-man.sh $(LOOM) $(LOOM_VERSION) > $@.tmp
	mv $@.tmp $@

.PHONY: install
install: $(LOOM) $(LIBLOOM_SO) $(LOOM_MAN) $(PUBLIC_HEADERS) driver/lib/loom.pc.in $(PYTHON_SRCS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	  $(DESTDIR)$(PREFIX)/include/loom $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PYTHONDIR)/loom
	install -m 755 $(LOOM) $(DESTDIR)$(PREFIX)/bin/loom
	install -m 755 $(LIBLOOM_SO) $(DESTDIR)$(PREFIX)/lib/
	ln -sf $(notdir $(LIBLOOM_SO)) $(DESTDIR)$(PREFIX)/lib/libloom.so.$(LOOM_SOVERSION)
	ln -sf libloom.so.$(LOOM_SOVERSION) $(DESTDIR)$(PREFIX)/lib/libloom.so
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(PREFIX)/include/loom/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(LOOM_VERSION)|' driver/lib/loom.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/loom.pc
	install -m 644 $(LOOM_MAN) $(DESTDIR)$(PREFIX)/share/man/man1/loom.1
	install -m 644 $(PYTHON_SRCS) $(DESTDIR)$(PYTHONDIR)/loom/
	printf '# Written by make install.\nLIBRARY = "%s"\n' \
	  "$(PREFIX)/lib/libloom.so.$(LOOM_SOVERSION)" > $(DESTDIR)$(PYTHONDIR)/loom/_install.py
	@echo "installed Loom $(LOOM_VERSION) in $(DESTDIR)$(PREFIX); Python package in $(DESTDIR)$(PYTHONDIR)"

clean:
	rm -rf build build-san

-include $(shell find $(BUILD)/obj $(BUILD)/pic -name '*.d' 2>/dev/null)
