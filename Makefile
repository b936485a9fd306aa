# Shale -- GNU make build, no configure step.
#   make                 libraries, shell and tools into build/
#   make test            install test deps if missing, build and run every test
#   make SANITIZE=1 test the same under ASan+UBSan in build-asan/ (implies DEBUG=1)
#   make DEBUG=1 test    asserts and validators on, in build-debug/
#   make run [FILE=db]   open the shell
#   make install PREFIX=/usr/local
# WERROR=1 turns warnings into errors (CI does this).

CC      ?= cc
PREFIX  ?= /usr/local
CSTD    := -std=c11 -D_GNU_SOURCE
WARN    := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes
OPT     ?= -O2
# include/ is searched for "quoted" includes only: <sqlite3.h> in the tests must
# be the reference SQLite's header, not Shale's include/sqlite3.h.
CFLAGS_BASE := $(CSTD) $(OPT) -g $(WARN) -fPIC -iquote include -pthread
ifeq ($(WERROR),1)
CFLAGS_BASE += -Werror
endif

# DEBUG=1 turns asserts on and runs the validators (pager_check, btree
# page/cursor checks, schema_check) where their invariants must hold (after a
# balance, at commit, after a schema load): SHALE_DEBUG in the code. The
# sanitizer build implies it. Release builds define NDEBUG: no asserts.
ifeq ($(SANITIZE),1)
BUILD   := build-asan
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
DEBUG   := 1
else ifeq ($(DEBUG),1)
BUILD   := build-debug
SANFLAGS :=
else
BUILD   := build
SANFLAGS :=
endif
ifeq ($(DEBUG),1)
CFLAGS_BASE += -DSHALE_DEBUG
else
CFLAGS_BASE += -DNDEBUG
endif

CFLAGS_ALL := $(CFLAGS_BASE) $(SANFLAGS) $(CFLAGS)
LDLIBS_CORE := -lm -pthread
LDFLAGS_ALL := $(SANFLAGS) $(LDFLAGS)

LIB_SRC   := $(sort $(wildcard src/*/*.c src/*/*/*.c))
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
TEST_COMMON_SRC := tests/test_main.c $(sort $(wildcard tests/common/*.c))
TEST_COMMON_OBJ := $(TEST_COMMON_SRC:%.c=$(BUILD)/obj/%.o)
TEST_SRC  := $(sort $(wildcard tests/unit/*/test_*.c tests/interop/test_*.c tests/crash/test_*.c tests/fuzz/test_*.c tests/diff/test_*.c tests/wal/test_*.c))
TEST_SRC  += $(sort $(wildcard tests/shell/test_*.c))
# The differential tester (tests/diff/): its library part is linked into its
# test binaries and into build/shale-diff (long runs).
DIFF_SRC  := $(filter-out tests/diff/test_%.c tests/diff/shale_diff.c,$(sort $(wildcard tests/diff/*.c)))
DIFF_OBJ  := $(DIFF_SRC:%.c=$(BUILD)/obj/%.o)
TEST_BIN  := $(foreach s,$(TEST_SRC),$(BUILD)/tests/$(basename $(notdir $(s))))
TOOL_SRC  := $(sort $(wildcard tools/*.c))
TOOL_BIN  := $(TOOL_SRC:tools/%.c=$(BUILD)/%)
CLI_SRC   := $(sort $(wildcard cli/*.c))
CLI_OBJ   := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)

.PHONY: all lib test run install install-check clean deps codes server server-run
all: lib $(BUILD)/shale $(TOOL_BIN)
lib: $(BUILD)/libshale.a $(BUILD)/libshale.so

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILD)/libshale.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libshale.so: $(LIB_OBJ) src/shale.map
	$(CC) -shared -Wl,-soname,libshale.so.0 -Wl,--version-script=src/shale.map $(LDFLAGS_ALL) -o $@ $(LIB_OBJ) $(LDLIBS_CORE)

# The shell links libedit for line editing when its header is there (cli/deps.sh
# installs libedit-dev once); the library never depends on it.
CLI_EDIT = $(shell test -f /usr/include/editline/readline.h && echo 1)
$(BUILD)/cli-deps.stamp: cli/deps.sh
	@mkdir -p $(BUILD)
	@bash cli/deps.sh
	@touch $@

$(BUILD)/obj/cli/%.o: cli/%.c | $(BUILD)/cli-deps.stamp
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(if $(CLI_EDIT),-DSHELL_EDITLINE) -MMD -MP -c $< -o $@

$(BUILD)/shale: $(CLI_OBJ) $(BUILD)/libshale.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(CLI_OBJ) $(BUILD)/libshale.a $(LDLIBS_CORE) $(if $(CLI_EDIT),-ledit)

$(BUILD)/%: $(BUILD)/obj/tools/%.o $(BUILD)/libshale.a
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(BUILD)/libshale.a $(LDLIBS_CORE)

# Every test binary links the harness, the library and the reference SQLite.
define test_rule
$(BUILD)/tests/$(basename $(notdir $(1))): $(BUILD)/obj/$(1:.c=.o) $(TEST_COMMON_OBJ) $(BUILD)/libshale.a
	@mkdir -p $(BUILD)/tests
	$(CC) $(LDFLAGS_ALL) -o $$@ $$^ -lsqlite3 $(LDLIBS_CORE)
endef
$(foreach s,$(filter-out tests/diff/% tests/shell/%,$(TEST_SRC)),$(eval $(call test_rule,$(s))))

# The differential tester's binaries also link its library part (before
# libshale.a, whose shale_* API its Shale backend calls).
define diff_test_rule
$(BUILD)/tests/$(basename $(notdir $(1))): $(BUILD)/obj/$(1:.c=.o) $(TEST_COMMON_OBJ) $(DIFF_OBJ) $(BUILD)/libshale.a
	@mkdir -p $(BUILD)/tests
	$(CC) $(LDFLAGS_ALL) -o $$@ $$^ -lsqlite3 $(LDLIBS_CORE)
endef
$(foreach s,$(filter tests/diff/%,$(TEST_SRC)),$(eval $(call diff_test_rule,$(s))))

# The shell tests (tests/shell/) also link their runner (tests/shell/*.c) and
# run build/shale, so it is built first.
SHELLT_SRC := $(filter-out tests/shell/test_%.c,$(sort $(wildcard tests/shell/*.c)))
SHELLT_OBJ := $(SHELLT_SRC:%.c=$(BUILD)/obj/%.o)
define shell_test_rule
$(BUILD)/tests/$(basename $(notdir $(1))): $(BUILD)/obj/$(1:.c=.o) $(TEST_COMMON_OBJ) $(SHELLT_OBJ) $(BUILD)/libshale.a | $(BUILD)/shale
	@mkdir -p $(BUILD)/tests
	$(CC) $(LDFLAGS_ALL) -o $$@ $$(filter-out $(BUILD)/shale,$$^) -lsqlite3 $(LDLIBS_CORE)
endef
$(foreach s,$(filter tests/shell/%,$(TEST_SRC)),$(eval $(call shell_test_rule,$(s))))

$(BUILD)/shale-diff: $(BUILD)/obj/tests/diff/shale_diff.o $(DIFF_OBJ) $(BUILD)/libshale.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ -lsqlite3 $(LDLIBS_CORE)

deps:
	@bash tests/deps.sh
	@bash server/deps.sh

# The result-code blocks of include/shale.h and include/sqlite3.h are written
# from src/util/result_codes.def (tests/unit/util/test_codes checks them).
codes:
	@sh tools/gen_codes.sh

# The sub-make lists the test binaries itself: it parses this file after deps
# installed the server's libraries, so test_server is among them on a fresh
# machine (expanding $(TEST_BIN) here would use this make's list, without it).
test: deps
	@$(MAKE) --no-print-directory all test-bins $(BUILD)/shale-diff
	@bash tests/run.sh $(BUILD)

run: all
	@$(BUILD)/shale $(FILE)

# build/shale-server (server/, issue 17): Hrana over HTTP and WebSocket. It links
# libwebsockets, jansson and OpenSSL (server/deps.sh installs them); `make` builds
# it when their headers are there. `make server-run SERVER_ARGS="--db x.db"`.
# Hrana 3's Protobuf schema (server/proto/*.proto) is compiled by protoc-c
# (Debian's protobuf-c) into $(BUILD)/gen/server/ at build time.
SERVER_SRC := $(sort $(wildcard server/*.c))
SERVER_PROTO := $(sort $(wildcard server/proto/*.proto))
SERVER_GEN := $(SERVER_PROTO:server/proto/%.proto=$(BUILD)/gen/server/%.pb-c.c)
SERVER_GEN_H := $(SERVER_GEN:%.c=%.h)
SERVER_OBJ := $(SERVER_SRC:%.c=$(BUILD)/obj/%.o) $(SERVER_GEN:%.c=%.o)
SERVER_OK  := $(shell test -f /usr/include/libwebsockets.h -a -f /usr/include/jansson.h -a -f /usr/include/openssl/evp.h -a -f /usr/include/protobuf-c/protobuf-c.h && command -v protoc-c >/dev/null && echo 1)
$(BUILD)/server-deps.stamp: server/deps.sh
	@mkdir -p $(BUILD)
	@bash server/deps.sh
	@touch $@
$(BUILD)/gen/server/%.pb-c.c $(BUILD)/gen/server/%.pb-c.h: server/proto/%.proto | $(BUILD)/server-deps.stamp
	@mkdir -p $(dir $@)
	protoc-c -Iserver/proto --c_out=$(dir $@) $<
$(SERVER_GEN:%.c=%.o): %.o: %.c $(SERVER_GEN_H)
	$(CC) $(CFLAGS_ALL) -I$(BUILD)/gen/server -c $< -o $@
$(SERVER_SRC:%.c=$(BUILD)/obj/%.o): $(BUILD)/obj/server/%.o: server/%.c | $(BUILD)/server-deps.stamp $(SERVER_GEN_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -I$(BUILD)/gen/server -MMD -MP -c $< -o $@
$(BUILD)/shale-server: $(SERVER_OBJ) $(BUILD)/libshale.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(SERVER_OBJ) $(BUILD)/libshale.a -lwebsockets -ljansson -lprotobuf-c -lcrypto $(LDLIBS_CORE)
server: $(BUILD)/shale-server
server-run: server
	$(BUILD)/shale-server $(SERVER_ARGS)
ifeq ($(SERVER_OK),1)
all: $(BUILD)/shale-server
# tests/server/run.sh: the real libSQL clients (npm) and a robustness test
TEST_BIN += $(BUILD)/tests/test_server
$(BUILD)/tests/test_server: tests/server/run.sh | $(BUILD)/shale-server
	@mkdir -p $(dir $@)
	install -m 755 $< $@
endif

# tests/symbols/run.sh: every global symbol of the library has its layer's prefix
TEST_BIN += $(BUILD)/tests/test_symbols
$(BUILD)/tests/test_symbols: tests/symbols/run.sh $(BUILD)/libshale.a
	@mkdir -p $(dir $@)
	install -m 755 $< $@

install: all
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/shale.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(BUILD)/libshale.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libshale.so $(DESTDIR)$(PREFIX)/lib/libshale.so.0
	ln -sf libshale.so.0 $(DESTDIR)$(PREFIX)/lib/libshale.so
	install -m 755 $(BUILD)/shale $(DESTDIR)$(PREFIX)/bin/
	install -m 755 $(BUILD)/shale-inspect $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|' src/shale.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/shale.pc

# Install into a scratch prefix and build a program against it with pkg-config,
# linked both ways (shared and static), then run both.
install-check:
	@rm -rf $(BUILD)/install-check
	@$(MAKE) --no-print-directory install PREFIX=$(CURDIR)/$(BUILD)/install-check >/dev/null
	@PKG_CONFIG_PATH=$(BUILD)/install-check/lib/pkgconfig; export PKG_CONFIG_PATH; \
	  $(CC) -o $(BUILD)/install-check/hello tests/install/hello.c $$(pkg-config --cflags --libs shale) && \
	  $(CC) -o $(BUILD)/install-check/hello-static tests/install/hello.c $$(pkg-config --cflags shale) \
	    $(BUILD)/install-check/lib/libshale.a $$(pkg-config --libs-only-other --static shale) -lm -pthread && \
	  LD_LIBRARY_PATH=$(BUILD)/install-check/lib $(BUILD)/install-check/hello && \
	  $(BUILD)/install-check/hello-static

clean:
	rm -rf build build-asan build-debug

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# Benchmarks (bench/): Shale against the reference SQLite, side by side.
#   make bench            the quick set, report in docs/benchmarks.{md,json,png}
#   make bench FULL=1     every row; BENCH_ARGS="--rows a,b --reps 5 --cpu 1" for more
#   make bench INSTR=1    also instructions per operation of each row x engine, counted by
#                         valgrind --tool=callgrind over the timed part only (build/shale-bench
#                         --instr [--instr-reps N]); Ir/op and their ratio print beside the
#                         wall-clock ratio. build/shale-bench --help lists the rows.
#   make speedtest1       SQLite's speedtest1.c on both libraries (docs/speedtest1.md);
#                         SPEEDTEST1_ARGS=--instr counts each step's instructions under
#                         callgrind instead (docs/speedtest1-instr.md, size 10 by default)
BENCH_SRC := $(sort $(wildcard bench/*.c))
$(BENCH_SRC:%.c=$(BUILD)/obj/%.o): $(wildcard bench/*.inc) bench/bench.h
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/obj/%.o)
$(BUILD)/obj/bench/bench.o: CFLAGS_ALL += -DBENCH_CFLAGS='"$(OPT)"'
$(BUILD)/shale-bench: $(BENCH_OBJ) $(BUILD)/libshale.a
	$(CC) $(LDFLAGS_ALL) -Wl,--wrap=shale_malloc -Wl,--wrap=shale_realloc -o $@ $(BENCH_OBJ) \
	  $(BUILD)/libshale.a -lsqlite3 $(LDLIBS_CORE)

# The cost of the network (bench/net/): the speedtest1 port and lookup_rowid
# embedded and through build/shale-server over HTTP (a Hrana client on
# libcurl + jansson), docs/network.md. NETBENCH_ARGS="--rows a,b --reps 5".
NETBENCH_SRC := $(sort $(wildcard bench/net/*.c))
NETBENCH_OBJ := $(NETBENCH_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/bench/run.o \
  $(BUILD)/obj/bench/engine_shale.o
$(NETBENCH_SRC:%.c=$(BUILD)/obj/%.o): $(wildcard bench/*.inc) bench/bench.h
$(BUILD)/shale-netbench: $(NETBENCH_OBJ) $(BUILD)/libshale.a
	$(CC) $(LDFLAGS_ALL) -Wl,--wrap=shale_malloc -Wl,--wrap=shale_realloc -o $@ $(NETBENCH_OBJ) \
	  $(BUILD)/libshale.a -lcurl -ljansson -lcrypto $(LDLIBS_CORE)

.PHONY: bench speedtest1 netbench
bench: deps
	@bash bench/deps.sh $(if $(INSTR),instr)
	@$(MAKE) --no-print-directory $(BUILD)/shale-bench compat
	$(BUILD)/shale-bench $(if $(FULL),--full) $(if $(INSTR),--instr) $(BENCH_ARGS)
	python3 bench/speedtest1.py --build $(BUILD) $(SPEEDTEST1_ARGS)
	@$(MAKE) --no-print-directory netbench

netbench: deps
	@bash bench/deps.sh net
	@bash server/deps.sh
	@$(MAKE) --no-print-directory $(BUILD)/shale-netbench $(BUILD)/shale-server
	$(BUILD)/shale-netbench $(NETBENCH_ARGS)

# SQLite's speedtest1.c (fetched from Debian's source package into
# $(BUILD)/speedtest1/, not kept in the tree) on the reference library and on
# build/compat: docs/speedtest1.md. SPEEDTEST1_ARGS="--size 100 --reps 5".
speedtest1: deps
	@$(MAKE) --no-print-directory compat
	python3 bench/speedtest1.py --build $(BUILD) $(SPEEDTEST1_ARGS)

# ---- sqlite3 compatibility library (compat/, issue 4) ----
#   build/compat/libsqlite3.so.0 (+ libsqlite3.so link) and libsqlite3.a: SQLite's
#   C API over Shale. tests/compat/test_*.c run the programs in tests/compat/progs/
#   (linked against the reference -lsqlite3) with LD_LIBRARY_PATH=build/compat.
COMPAT_SRC  := $(sort $(wildcard compat/*.c))
COMPAT_OBJ  := $(COMPAT_SRC:%.c=$(BUILD)/obj/%.o)
COMPAT_SO   := $(BUILD)/compat/libsqlite3.so.0
COMPAT_A    := $(BUILD)/compat/libsqlite3.a
COMPAT_PROG_SRC := $(sort $(wildcard tests/compat/progs/*.c))
COMPAT_PROGS := $(COMPAT_PROG_SRC:tests/compat/progs/%.c=$(BUILD)/compat/progs/%)
COMPAT_TEST_SRC := $(sort $(wildcard tests/compat/test_*.c))
COMPAT_TEST_BIN := $(foreach s,$(COMPAT_TEST_SRC),$(BUILD)/tests/$(basename $(notdir $(s))))
TEST_BIN += $(COMPAT_TEST_BIN)

.PHONY: compat
compat: $(COMPAT_SO) $(BUILD)/compat/libsqlite3.so $(COMPAT_A)
all: compat

$(COMPAT_SO): $(COMPAT_OBJ) $(LIB_OBJ) compat/libsqlite3.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libsqlite3.so.0 -Wl,--version-script=compat/libsqlite3.map \
	  $(LDFLAGS_ALL) -o $@ $(COMPAT_OBJ) $(LIB_OBJ) $(LDLIBS_CORE)

$(BUILD)/compat/libsqlite3.so: $(COMPAT_SO)
	ln -sf libsqlite3.so.0 $@

$(COMPAT_A): $(COMPAT_OBJ) $(LIB_OBJ)
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $^

# The programs are built exactly as a SQLite user would build them: the system
# <sqlite3.h> and -lsqlite3 (the reference). The tests swap in ours at run time.
$(BUILD)/compat/progs/%: tests/compat/progs/%.c tests/compat/progs/prog.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(OPT) -g $(WARN) $(if $(filter 1,$(WERROR)),-Werror) $(SANFLAGS) \
	  -o $@ $< -lsqlite3 -lm -pthread

# dlclose.c loads the library with dlopen only (no -lsqlite3), so that
# dlclose really unloads it.
$(BUILD)/compat/progs/dlclose: tests/compat/progs/dlclose.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(OPT) -g $(WARN) $(if $(filter 1,$(WERROR)),-Werror) $(SANFLAGS) \
	  -o $@ $< -ldl -pthread

# The test extension (tests/compat/ext/testext.c) is built as a third party
# builds one: against the system <sqlite3ext.h>, into a library of its own;
# testext_dflt.so also has the default entry point sqlite3_extension_init.
TESTEXT_SO := $(BUILD)/compat/ext/libtestext.so $(BUILD)/compat/ext/testext_dflt.so
$(BUILD)/compat/ext/libtestext.so: tests/compat/ext/testext.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O1 -g $(WARN) $(if $(filter 1,$(WERROR)),-Werror) -I/usr/include -fPIC -shared \
	  -o $@ $<
$(BUILD)/compat/ext/testext_dflt.so: tests/compat/ext/testext.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O1 -g $(WARN) $(if $(filter 1,$(WERROR)),-Werror) -I/usr/include -fPIC -shared \
	  -DTESTEXT_DEFAULT -o $@ $<

$(foreach s,$(COMPAT_TEST_SRC),$(eval $(call test_rule,$(s))))
$(COMPAT_TEST_BIN): | compat $(COMPAT_PROGS) $(TESTEXT_SO) $(BUILD)/libshale.so

# The sqlite3_* layer's cost over the native API (bench/compat/overhead.c):
# one workload built against libshale.so and against the compat library.
$(BUILD)/bench-api-native: bench/compat/overhead.c $(BUILD)/libshale.so
	ln -sf libshale.so $(BUILD)/libshale.so.0
	$(CC) $(CFLAGS_ALL) -DAPI_NATIVE -o $@ $< $(BUILD)/libshale.so -Wl,-rpath,'$$ORIGIN'
$(BUILD)/bench-api-compat: bench/compat/overhead.c $(COMPAT_SO)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(COMPAT_SO) -Wl,-rpath,'$$ORIGIN/compat'
# The system calls of a commit on both engines (tools/commit_syscalls.sh):
# linked against Debian's libsqlite3; LD_LIBRARY_PATH=build/compat for Shale.
$(BUILD)/commit-probe: bench/compat/commit_probe.c
	$(CC) $(CFLAGS_ALL) -o $@ $< -lsqlite3

# every test binary of this parse (the server's only when its libraries exist);
# at the end, after every TEST_BIN +=, as prerequisites expand when read
.PHONY: test-bins
test-bins: $(TEST_BIN)
