# pisbx — one build for everything: make, make check, make demo, make bench,
# make fuzz, make install.  Sources are found by wildcard: add a file to a
# folder and it is built; add tests/unit/test_*.c, tests/integration/*.sh or
# tests/fuzz/fuzz_*.c and it is run.
#
# Reading this file does nothing but read: no ./bootstrap, no apt-get, so
# `make -n` and `make` only build.  make check, make demo and make bench
# first install what they drive through ./bootstrap, once (a stamp under
# $(BUILD)/.deps/ remembers it until the bootstrap script changes or
# make clean).  The build runs one job per CPU unless -jN says otherwise.

PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= cc
FUZZ_CC  ?= clang
SANITIZE ?= 0
STATIC   ?= 0

ifeq ($(SANITIZE),1)
BUILD    ?= build-san
BINDIR   ?= $(BUILD)/bin
SANFLAGS  = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
BUILD    ?= build
BINDIR   ?= bin
SANFLAGS  =
endif

# No built-in rules: every object is built by a rule below, with the
# project's flags.  Parallel by default (make 4.3 honours -j set here; a
# -jN on the command line wins; sub-makes share the top one's jobs).
MAKEFLAGS += -r
ifeq ($(MAKELEVEL),0)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif
.SUFFIXES:
.DELETE_ON_ERROR:

# pkg-config once per make, not once per compile.
PKGS       := libevent libcrypto libcares jansson libseccomp
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
TEST_CFLAGS := $(shell pkg-config --cflags cmocka 2>/dev/null)

# make STATIC=1: pisbx-run linked static-pie, its libraries and libc in
# the binary, so no dynamic loading at each start (about 0.5 ms of every
# sandboxed command here; docs/performance.md).  Off by default: a static
# pisbx-run keeps the libevent, c-ares and jansson it was built with
# until it is rebuilt, where the dynamic one gets the distribution's
# security updates at once.  (glibc warns that getpwuid and friends then
# need its NSS modules of the same version at run time: pisbx-run only
# asks when $$HOME is unset.)
ifeq ($(STATIC),1)
ifeq ($(SANITIZE),1)
$(error pisbx: STATIC=1 and SANITIZE=1 do not go together: the sanitizers need dynamic linking)
endif
RUN_LDFLAGS := -static-pie
RUN_LIBS    := $(shell pkg-config --static --libs $(PKGS) 2>/dev/null)
# dlopen from a static-pie cannot load the TLS module: this pisbx-run
# gets a tlsmod_load that says so (linked ahead of libpisbx.a's).
RUN_OBJ     := $(BUILD)/proxy/tlsload-static.o
else
RUN_LDFLAGS :=
RUN_LIBS     = $(PKG_LIBS)
RUN_OBJ     :=
endif
TEST_LIBS  := $(shell pkg-config --libs cmocka 2>/dev/null)

# The TLS module (proxy/tlsmod.h): OpenSSL and PCRE2 in a library of its
# own, loaded by the programs only when a config asks for TLS termination
# or credentials, so that they do not link libssl, libcrypto and libpcre2
# (about 3 ms at every start).  Position-independent, its one export
# visible; the common/ files it needs compiled into it, libevent never.
TLS_PKGS    := libssl libcrypto libpcre2-8
TLS_CFLAGS  := $(shell pkg-config --cflags $(TLS_PKGS) 2>/dev/null)
TLS_LIBS    := $(shell pkg-config --libs $(TLS_PKGS) 2>/dev/null)
TLS_SRC     := $(wildcard proxy/tls/*.c) common/secmem.c
TLS_OBJ     := $(patsubst %.c,$(BUILD)/tlsmod/%.o,$(TLS_SRC))
TLSMOD      := $(if $(wildcard proxy/tls/module.c),$(BINDIR)/pisbx-tls.so)

# Goals that install what they need before they build (or build nothing).
SELF_DEPS_GOALS := check demo bench clean uninstall
ifneq ($(filter-out $(SELF_DEPS_GOALS),$(or $(MAKECMDGOALS),all)),)
ifeq ($(PKG_LIBS),)
$(error pisbx: build libraries missing (pkg-config: $(PKGS)); run ./bootstrap to install them (as root, or it prints the apt-get line), or make check / make demo, which run it)
endif
endif

WARN    = -Wall -Wextra -Wshadow -Wformat=2 -Wwrite-strings -Wstrict-prototypes \
	  -Wmissing-prototypes -Werror=implicit-function-declaration -Werror
CFLAGS ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(CPPFLAGS) $(WARN) $(CFLAGS) $(SANFLAGS) -I. \
	  $(PKG_CFLAGS)
LDFLAGS_ALL = $(SANFLAGS) $(LDFLAGS)
DEPFLAGS = -MMD -MP

COMMON_SRC   := $(wildcard common/*.c)
POLICY_SRC   := $(wildcard policy/*.c)
APPROVAL_SRC := $(wildcard approval/*.c)
PROXY_SRC    := $(filter-out proxy/main.c,$(wildcard proxy/*.c))
SUPERVISOR_SRC := $(filter-out supervisor/main.c,$(wildcard supervisor/*.c))
LAUNCHER_SRC := $(filter-out launcher/main.c launcher/sandbox/seccomp_gen.c,\
		$(wildcard launcher/*.c launcher/*/*.c))
GEN_SRC      := $(BUILD)/gen/default_config.c $(BUILD)/gen/seccomp_bpf.c
LIB_SRC      := $(COMMON_SRC) $(POLICY_SRC) $(APPROVAL_SRC) $(PROXY_SRC) \
		$(SUPERVISOR_SRC) $(LAUNCHER_SRC)

LIB_OBJ  := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRC)) \
	    $(patsubst $(BUILD)/%.c,$(BUILD)/%.o,$(GEN_SRC))
LIBPISBX := $(BUILD)/libpisbx.a

# LINKS: pisbx-run under a second name (main() looks at argv[0]).
PROGS :=
MAIN_OBJ :=
LINKS :=
ifneq ($(wildcard proxy/main.c),)
PROGS += $(BINDIR)/pisbx-proxy
MAIN_OBJ += $(BUILD)/proxy/main.o
endif
ifneq ($(wildcard launcher/main.c),)
PROGS += $(BINDIR)/pisbx-run
MAIN_OBJ += $(BUILD)/launcher/main.o
LINKS += $(BINDIR)/pisbx-sh
endif
ifneq ($(wildcard supervisor/main.c),)
PROGS += $(BINDIR)/pisbx-supervisor
MAIN_OBJ += $(BUILD)/supervisor/main.o
endif

UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNIT_BIN  := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
HELPER_SRC := $(wildcard tests/helpers/*.c)
HELPER_BIN := $(patsubst tests/helpers/%.c,$(BUILD)/tests/helpers/%,$(HELPER_SRC))
FUZZ_SRC  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN  := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))
BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

.PHONY: all check check-run unit integration fuzz demo demo-run bench \
	bench-run soak install uninstall clean tests-build
all: $(PROGS) $(LINKS) $(TLSMOD)

$(BUILD)/gen/default_config.c: conf/default.json scripts/embed.sh
	@mkdir -p $(dir $@)
	sh scripts/embed.sh pisbx_default_config conf/default.json > $@

# The command's seccomp filter, compiled at build time: seccomp_gen builds
# the rules of launcher/sandbox/seccomp.c with libseccomp and writes the
# programs.
$(BUILD)/gen/seccomp_gen: launcher/sandbox/seccomp_gen.c \
	    $(BUILD)/launcher/sandbox/seccomp.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS)

$(BUILD)/gen/seccomp_bpf.c: $(BUILD)/gen/seccomp_gen
	$< > $@

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c -o $@ $<

# The generated config, with the same flags as every other source.
$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(LIBPISBX): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(PROGS): $(BINDIR)/pisbx-%: $(LIBPISBX)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) $(PROG_LDFLAGS) -o $@ $(filter %.o,$^) \
	    $(LIBPISBX) $(or $(PROG_LIBS),$(PKG_LIBS))
$(BINDIR)/pisbx-proxy: $(BUILD)/proxy/main.o
$(BINDIR)/pisbx-run: $(BUILD)/launcher/main.o $(RUN_OBJ)
$(BINDIR)/pisbx-run: PROG_LDFLAGS = $(RUN_LDFLAGS)
$(BINDIR)/pisbx-run: PROG_LIBS = $(RUN_LIBS)
# Relinked when STATIC changes.
$(BINDIR)/pisbx-run: $(BUILD)/.link-static-$(STATIC)
$(BUILD)/.link-static-%:
	@mkdir -p $(dir $@)
	@rm -f $(BUILD)/.link-static-*
	@touch $@
$(BINDIR)/pisbx-supervisor: $(BUILD)/supervisor/main.o

$(BUILD)/proxy/tlsload-static.o: proxy/tlsload.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DPISBX_STATIC_RUN $(DEPFLAGS) -c -o $@ $<

$(BUILD)/tlsmod/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(TLS_CFLAGS) -fPIC -fvisibility=hidden \
	    $(DEPFLAGS) -c -o $@ $<

$(TLSMOD): $(TLS_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -shared -fPIC -Wl,-z,defs -Wl,-z,now \
	    -Wl,--as-needed -o $@ $(TLS_OBJ) $(TLS_LIBS)

$(BINDIR)/pisbx-sh: $(BINDIR)/pisbx-run
	ln -sf pisbx-run $@

$(UNIT_BIN): $(BUILD)/tests/%: tests/unit/%.c $(LIBPISBX)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(TEST_CFLAGS) $(UNIT_CFLAGS) $(DEPFLAGS) \
	    $(LDFLAGS_ALL) -o $@ $< $(LIBPISBX) $(PKG_LIBS) $(UNIT_LIBS) \
	    $(TEST_LIBS)
# test_tlsmod loads this build's module by its path, and plays the
# other end of some handshakes with OpenSSL itself.
$(BUILD)/tests/test_tlsmod: $(TLSMOD)
$(BUILD)/tests/test_tlsmod: UNIT_CFLAGS = $(TLS_CFLAGS) \
	-DTLSMOD_TEST_PATH='"$(abspath $(TLSMOD))"'
$(BUILD)/tests/test_tlsmod: UNIT_LIBS = $(TLS_LIBS)

$(HELPER_BIN): $(BUILD)/tests/helpers/%: tests/helpers/%.c $(LIBPISBX)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) $(LDFLAGS_ALL) -o $@ $< $(LIBPISBX) \
	    $(PKG_LIBS)

$(BENCH_BIN): $(BUILD)/bench/%: bench/%.c $(LIBPISBX)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) $(LDFLAGS_ALL) -o $@ $< $(LIBPISBX) \
	    $(PKG_LIBS)

# libFuzzer targets: the library built once with clang's fuzzer
# instrumentation (fuzzer-no-link) into its own archive, which each
# target links.
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE -g -O1 -I. $(PKG_CFLAGS)
FUZZ_OBJ := $(patsubst %.c,$(BUILD)/fuzzlib/%.o,$(LIB_SRC)) \
	    $(patsubst $(BUILD)/%.c,$(BUILD)/fuzzlib/%.o,$(GEN_SRC))
FUZZ_LIB := $(BUILD)/fuzzlib/libpisbx-fuzz.a

$(BUILD)/fuzzlib/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined \
	    $(DEPFLAGS) -c -o $@ $<
$(BUILD)/fuzzlib/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined \
	    $(DEPFLAGS) -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_BIN): $(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined \
	    $(DEPFLAGS) -o $@ $< $(FUZZ_LIB) $(PKG_LIBS)

tests-build: $(PROGS) $(LINKS) $(TLSMOD) $(UNIT_BIN) $(HELPER_BIN) $(BENCH_BIN)

# What check, demo and bench drive, installed by ./bootstrap once: the
# stamp is redone when bootstrap changes (or after make clean).
DEPS_STAMP = $(BUILD)/.deps
$(DEPS_STAMP)/%: bootstrap
	./bootstrap --$*
	@mkdir -p $(dir $@)
	@touch $@

# The whole suite: unit tests, integration scenarios with real clients, and
# a short run of every fuzz target over its seed corpus.  Ends with one
# summary line "N passed, N failed".  The second make reads this file
# again once the libraries are surely there.
check: $(DEPS_STAMP)/test
	@$(MAKE) --no-print-directory check-run

check-run: $(PROGS) $(LINKS) $(TLSMOD) $(UNIT_BIN) $(HELPER_BIN) $(BENCH_BIN) $(if $(filter 1,$(SANITIZE)),,$(FUZZ_BIN))
	@BUILD=$(BUILD) BINDIR=$(BINDIR) SANITIZE=$(SANITIZE) sh tests/run.sh

unit: $(UNIT_BIN)
	@BUILD=$(BUILD) BINDIR=$(BINDIR) sh tests/run.sh unit

integration: $(PROGS) $(LINKS) $(TLSMOD) $(HELPER_BIN)
	@BUILD=$(BUILD) BINDIR=$(BINDIR) sh tests/run.sh integration

fuzz: $(FUZZ_BIN)
	@BUILD=$(BUILD) FUZZ_SECONDS=$${FUZZ_SECONDS:-60} sh tests/run.sh fuzz

demo: $(DEPS_STAMP)/demo
	@$(MAKE) --no-print-directory demo-run

demo-run: $(PROGS) $(LINKS) $(TLSMOD) $(HELPER_BIN)
	@BUILD=$(BUILD) BINDIR=$(BINDIR) sh scripts/demo.sh

bench: $(DEPS_STAMP)/all
	@$(MAKE) --no-print-directory bench-run

bench-run: $(PROGS) $(LINKS) $(TLSMOD) $(HELPER_BIN) $(BENCH_BIN)
	@BUILD=$(BUILD) BINDIR=$(BINDIR) sh bench/run.sh

# make soak: docs/reliability.md's promises at full size (10,000 tunnels,
# 1,000 conn/s for a minute inside and outside pisbx-run, the fault
# scenarios with bigger sizes); one table; not part of make check.
soak: $(PROGS) $(LINKS) $(TLSMOD) $(HELPER_BIN)
	@BUILD=$(BUILD) BINDIR=$(BINDIR) /usr/bin/python3 bench/soak.py

# make install: the programs and pisbx-run's other names ($(LINKS), when
# defined), the manual pages with their docs/ references pointed at
# $(DOCDIR), the docs, the example config, the schema and the domain
# lists, the systemd units, and the standalone proxy's config and
# logrotate file under $(SYSCONFDIR), which are never overwritten.
# Everything but the binaries is copied through $(INSTALL_SUBST), so
# the installed units and pages name the installed paths.
#
# SYSCONFDIR follows PREFIX, as GNU's sysconfdir does ($(PREFIX)/etc),
# so "make install PREFIX=~/.local" writes nothing outside it; under the
# system prefixes (/usr, /usr/local) it is /etc, where logrotate and
# the administrator look.
ifneq ($(filter /usr /usr/ /usr/local /usr/local/,$(PREFIX)),)
SYSCONFDIR  ?= /etc
else
SYSCONFDIR  ?= $(PREFIX)/etc
endif
MANDIR      ?= $(PREFIX)/share/man
DOCDIR      ?= $(PREFIX)/share/doc/pisbx
DATADIR     ?= $(PREFIX)/share/pisbx
# The TLS module: found by the programs at ../lib/pisbx/ from their own
# directory, so it follows PREFIX (never a Debian multiarch directory).
LIBDIR      := $(PREFIX)/lib/pisbx
UNITDIR     ?= $(PREFIX)/lib/systemd/system
USERUNITDIR ?= $(PREFIX)/lib/systemd/user
INSTALL_SUBST = sed -e 's|@BINDIR@|$(PREFIX)/bin|g' \
	-e 's|@DOCDIR@|$(DOCDIR)|g' -e 's|@DATADIR@|$(DATADIR)|g' \
	-e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'
MAN_SUBST = sed -e 's|docs/\([a-z0-9-]*\.md\)|$(DOCDIR)/\1|g' \
	-e 's|/usr/local/bin/pisbx\\-|$(PREFIX)/bin/pisbx\\-|g'
# The README and docs/*.md as installed: what they name in the source
# tree (docs/, conf/, the manual pages, /usr/local/bin) is where install
# put it, and links between them are relative to $(DOCDIR).
DOC_SUBST = sed -e 's|](docs/\(pisbx-[a-z]*\.1\))|]($(MANDIR)/man1/\1)|g' \
	-e 's|](\(pisbx-[a-z]*\.1\))|]($(MANDIR)/man1/\1)|g' \
	-e 's|](docs/|](|g' -e 's|`docs/\([a-z0-9-]*\.md\)`|`\1`|g' \
	-e 's@\(^\|[^[:alnum:]_./-]\)\(\.\./\)\?conf/logrotate/pisbx-proxy@\1$(SYSCONFDIR)/logrotate.d/pisbx-proxy@g' \
	-e 's@\(^\|[^[:alnum:]_./-]\)\(\.\./\)\?conf/\(domains/\|rules/\|deploy/\|[a-z]*\.json\)@\1$(DATADIR)/\3@g' \
	-e 's|/usr/local/bin/pisbx-|$(PREFIX)/bin/pisbx-|g'
README_NOTE = > This copy was installed by `make install`: the files it names are \
	where install put them; building, testing and the layout are about the \
	source tree.
UNITS      := $(wildcard conf/systemd/*.service.in)
USER_UNITS := $(wildcard conf/systemd/user/*.service.in)
DOMAINS    := $(wildcard conf/domains/*.json)
RULES      := $(wildcard conf/rules/*.json)
DEPLOY     := $(wildcard conf/deploy/*)

install: $(PROGS) $(LINKS) $(TLSMOD)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(LIBDIR) \
	    $(DESTDIR)$(DOCDIR) $(DESTDIR)$(DATADIR)/domains \
	    $(DESTDIR)$(DATADIR)/rules \
	    $(DESTDIR)$(DATADIR)/deploy \
	    $(DESTDIR)$(UNITDIR) $(DESTDIR)$(USERUNITDIR) \
	    $(DESTDIR)$(SYSCONFDIR)/pisbx $(DESTDIR)$(SYSCONFDIR)/logrotate.d
	install -m 0755 $(PROGS) $(DESTDIR)$(PREFIX)/bin/
	$(if $(TLSMOD),install -m 0644 $(TLSMOD) $(DESTDIR)$(LIBDIR)/)
	for l in $(notdir $(LINKS)); do \
	    ln -sf pisbx-run $(DESTDIR)$(PREFIX)/bin/$$l || exit 1; done
	for m in docs/*.1; do \
	    $(MAN_SUBST) $$m > $(DESTDIR)$(MANDIR)/man1/$${m#docs/} && \
	    chmod 0644 $(DESTDIR)$(MANDIR)/man1/$${m#docs/} || exit 1; done
	for d in docs/*.md; do f=$(DESTDIR)$(DOCDIR)/$${d#docs/}; \
	    $(DOC_SUBST) $$d > $$f && chmod 0644 $$f || exit 1; done
	$(DOC_SUBST) -e '1s|$$|\n\n$(README_NOTE)|' README.md \
	    > $(DESTDIR)$(DOCDIR)/README.md
	chmod 0644 $(DESTDIR)$(DOCDIR)/README.md
	install -m 0644 conf/example.json conf/schema.json conf/default.json \
	    $(DESTDIR)$(DATADIR)/
	$(if $(DOMAINS),install -m 0644 $(DOMAINS) $(DESTDIR)$(DATADIR)/domains/)
	$(if $(RULES),install -m 0644 $(RULES) $(DESTDIR)$(DATADIR)/rules/)
	$(if $(DEPLOY),install -m 0644 $(DEPLOY) $(DESTDIR)$(DATADIR)/deploy/)
	for u in $(UNITS); do f=$$(basename $$u .in); \
	    $(INSTALL_SUBST) $$u > $(DESTDIR)$(UNITDIR)/$$f && \
	    chmod 0644 $(DESTDIR)$(UNITDIR)/$$f || exit 1; done
	for u in $(USER_UNITS); do f=$$(basename $$u .in); \
	    $(INSTALL_SUBST) $$u > $(DESTDIR)$(USERUNITDIR)/$$f && \
	    chmod 0644 $(DESTDIR)$(USERUNITDIR)/$$f || exit 1; done
	[ -e $(DESTDIR)$(SYSCONFDIR)/pisbx/proxy.json ] || \
	    install -m 0644 conf/proxy.json $(DESTDIR)$(SYSCONFDIR)/pisbx/
	[ -e $(DESTDIR)$(SYSCONFDIR)/logrotate.d/pisbx-proxy ] || \
	    install -m 0644 conf/logrotate/pisbx-proxy \
	    $(DESTDIR)$(SYSCONFDIR)/logrotate.d/

# Removes what install put, but the files under $(SYSCONFDIR) (they may
# hold the administrator's changes).
uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/bin/,$(notdir $(PROGS) $(LINKS)))
	rm -rf $(DESTDIR)$(LIBDIR)
	rm -f $(patsubst docs/%,$(DESTDIR)$(MANDIR)/man1/%,$(wildcard docs/*.1))
	rm -rf $(DESTDIR)$(DOCDIR) $(DESTDIR)$(DATADIR)
	rm -f $(patsubst conf/systemd/%.in,$(DESTDIR)$(UNITDIR)/%,$(UNITS)) \
	    $(patsubst conf/systemd/user/%.in,$(DESTDIR)$(USERUNITDIR)/%,$(USER_UNITS))

clean:
	rm -rf build build-san bin

# Header dependencies (-MMD) of everything built so far.
-include $(wildcard $(LIB_OBJ:.o=.d) $(MAIN_OBJ:.o=.d) $(UNIT_BIN:=.d) \
	$(BUILD)/gen/seccomp_gen.d \
	$(HELPER_BIN:=.d) $(BENCH_BIN:=.d) $(FUZZ_OBJ:.o=.d) $(FUZZ_BIN:=.d) \
	$(TLS_OBJ:.o=.d) $(BUILD)/proxy/tlsload-static.d)
