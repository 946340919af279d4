# pisbx — one build for everything: make, make check, make demo, make bench,
# make fuzz, make install.  Sources are found by wildcard: add a file to a
# folder and it is built; add tests/unit/test_*.c, tests/integration/*.sh or
# tests/fuzz/fuzz_*.c and it is run.

PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= cc
FUZZ_CC  ?= clang
SANITIZE ?= 0

ifeq ($(SANITIZE),1)
BUILD    ?= build-san
BINDIR   ?= $(BUILD)/bin
SANFLAGS  = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
BUILD    ?= build
BINDIR   ?= bin
SANFLAGS  =
endif

PKGS := libevent libevent_openssl openssl libcares jansson libseccomp
TEST_PKGS := cmocka

# Missing libraries: let the project's bootstrap install them (or say how).
ifneq ($(MAKECMDGOALS),clean)
ifneq ($(shell pkg-config --exists $(PKGS) $(TEST_PKGS) 2>/dev/null && echo ok),ok)
$(info pisbx: build libraries missing; running ./bootstrap)
ifneq ($(shell ./bootstrap >&2 && echo ok),ok)
$(error ./bootstrap could not install the build dependencies; see above)
endif
endif
endif

WARN    = -Wall -Wextra -Wshadow -Wformat=2 -Wwrite-strings -Wstrict-prototypes \
	  -Wmissing-prototypes -Werror=implicit-function-declaration -Werror
CFLAGS ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(SANFLAGS) \
	  -I. $(shell pkg-config --cflags $(PKGS))
LIBS    = $(shell pkg-config --libs $(PKGS)) -lpthread
LDFLAGS_ALL = $(SANFLAGS) $(LDFLAGS)

COMMON_SRC   := $(wildcard common/*.c)
POLICY_SRC   := $(wildcard policy/*.c)
APPROVAL_SRC := $(wildcard approval/*.c)
PROXY_SRC    := $(filter-out proxy/main.c,$(wildcard proxy/*.c))
LAUNCHER_SRC := $(filter-out launcher/main.c,$(wildcard launcher/*.c))
SUPERVISOR_SRC := $(filter-out supervisor/main.c,$(wildcard supervisor/*.c))
GEN_SRC      := $(BUILD)/gen/default_config.c
LIB_SRC      := $(COMMON_SRC) $(POLICY_SRC) $(APPROVAL_SRC) $(PROXY_SRC) $(SUPERVISOR_SRC) \
		$(LAUNCHER_SRC)

LIB_OBJ  := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRC)) $(BUILD)/gen/default_config.o
LIBPISBX := $(BUILD)/libpisbx.a

PROGS :=
ifneq ($(wildcard proxy/main.c),)
PROGS += $(BINDIR)/pisbx-proxy
endif
ifneq ($(wildcard launcher/main.c),)
PROGS += $(BINDIR)/pisbx-run
endif
ifneq ($(wildcard supervisor/main.c),)
PROGS += $(BINDIR)/pisbx-supervisor
endif

UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNIT_BIN  := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
HELPER_SRC := $(wildcard tests/helpers/*.c)
HELPER_BIN := $(patsubst tests/helpers/%.c,$(BUILD)/tests/helpers/%,$(HELPER_SRC))
FUZZ_SRC  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN  := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))

.PHONY: all check check-run unit integration fuzz demo demo-run bench bench-run install clean tests-build
all: $(PROGS)

$(BUILD)/gen/default_config.c: conf/default.json scripts/embed.sh
	@mkdir -p $(dir $@)
	sh scripts/embed.sh pisbx_default_config conf/default.json > $@

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(LIBPISBX): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BINDIR)/pisbx-proxy: $(BUILD)/proxy/main.o $(LIBPISBX)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

$(BINDIR)/pisbx-run: $(BUILD)/launcher/main.o $(LIBPISBX)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

$(BINDIR)/pisbx-supervisor: $(BUILD)/supervisor/main.o $(LIBPISBX)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIBPISBX)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(shell pkg-config --cflags cmocka) $(LDFLAGS_ALL) -o $@ $< $(LIBPISBX) $(LIBS) $(shell pkg-config --libs cmocka)

$(BUILD)/tests/helpers/%: tests/helpers/%.c $(LIBPISBX)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS_ALL) -o $@ $< $(LIBPISBX) $(LIBS)

# libFuzzer targets: every library source rebuilt with clang's fuzzer
# instrumentation (they are small; a full rebuild takes seconds).
FUZZ_FLAGS = -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
	  -I. $(shell pkg-config --cflags $(PKGS))
$(BUILD)/fuzz/%: tests/fuzz/%.c $(LIB_SRC) $(GEN_SRC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(LIB_SRC) $(GEN_SRC) $(LIBS)

tests-build: $(PROGS) $(UNIT_BIN) $(HELPER_BIN)

# The whole suite: unit tests, integration scenarios with real clients, and
# a short run of every fuzz target over its seed corpus.  Ends with one
# summary line "N passed, N failed".
# check and demo first make sure the clients they drive are installed
# (./bootstrap is quick when nothing is missing), then build and run.
check:
	@./bootstrap --test
	@$(MAKE) --no-print-directory check-run

check-run: $(PROGS) $(UNIT_BIN) $(HELPER_BIN) $(if $(filter 1,$(SANITIZE)),,$(FUZZ_BIN))
	@BUILD=$(BUILD) BINDIR=$(BINDIR) SANITIZE=$(SANITIZE) sh tests/run.sh

unit: $(UNIT_BIN)
	@BUILD=$(BUILD) BINDIR=$(BINDIR) sh tests/run.sh unit

integration: $(PROGS) $(HELPER_BIN)
	@BUILD=$(BUILD) BINDIR=$(BINDIR) sh tests/run.sh integration

fuzz: $(FUZZ_BIN)
	@BUILD=$(BUILD) FUZZ_SECONDS=$${FUZZ_SECONDS:-60} sh tests/run.sh fuzz

demo:
	@./bootstrap --demo
	@$(MAKE) --no-print-directory demo-run

demo-run: $(PROGS) $(HELPER_BIN)
	@BUILD=$(BUILD) BINDIR=$(BINDIR) sh scripts/demo.sh

bench:
	@./bootstrap --all
	@$(MAKE) --no-print-directory bench-run

bench-run: $(PROGS) $(HELPER_BIN) $(BUILD)/bench/bench_policy $(BUILD)/bench/guard_floor
	@BUILD=$(BUILD) BINDIR=$(BINDIR) sh bench/run.sh

$(BUILD)/bench/%: bench/%.c $(LIBPISBX)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS_ALL) -o $@ $< $(LIBPISBX) $(LIBS)

install: $(PROGS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(PROGS) $(DESTDIR)$(PREFIX)/bin/
	for m in docs/*.1; do [ -f "$$m" ] && install -m 0644 "$$m" $(DESTDIR)$(PREFIX)/share/man/man1/; done; true

clean:
	rm -rf build build-san bin

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
