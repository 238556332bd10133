# tensorfs — a FUSE filesystem of tensors in GPU memory.
# Targets: all (default), asan, test, test-gpu, bench, install, uninstall, clean.

TFS_MAJOR=0
TFS_MINOR=1
TFS_PATCH=0
TFS_VERSION=$(TFS_MAJOR).$(TFS_MINOR).$(TFS_PATCH)
TFS_SONAME=libtensorfs.so.$(TFS_MAJOR)

PREFIX?=/usr/local
INCLUDE_PATH?=include
LIBRARY_PATH?=lib
# The folder libraries install to. Not LIBRARY_PATH from the environment: that is the
# compiler's search path (CUDA setups export it); `make LIBRARY_PATH=lib64` still works.
LIBDIR=$(if $(filter command line,$(origin LIBRARY_PATH)),$(LIBRARY_PATH),lib)
BINARY_PATH?=bin
PKGCONF_PATH?=$(LIBDIR)/pkgconfig
INSTALL?=install

# Build folder: `make O=build-asan SANITIZE=1` is what `make asan` does.
O?=build
CC?=cc
OPTIMIZATION?=-O2
WARNINGS=-Wall -Wextra -Wstrict-prototypes -Wmissing-prototypes -Werror
DEBUG_FLAGS?=-g -ggdb
PKGS=fuse3 hiredis libcjson liburing ucx
PKG_CFLAGS:=$(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS:=$(shell pkg-config --libs $(PKGS) 2>/dev/null)
REAL_CFLAGS=-std=gnu11 -pthread -fPIC -D_GNU_SOURCE -DFUSE_USE_VERSION=312 $(OPTIMIZATION) $(WARNINGS) $(DEBUG_FLAGS) \
	-MMD -MP -Ilib -Icore -Ifs $(PKG_CFLAGS) $(CFLAGS)
REAL_LDFLAGS=-pthread $(LDFLAGS)
ifeq ($(LOCK_STATS),1)
REAL_CFLAGS+=-DTFS_LOCK_STATS
endif
ifeq ($(SANITIZE),1)
REAL_CFLAGS+=-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
REAL_LDFLAGS+=-fsanitize=address,undefined
endif

# CUDA: found when $(CUDA_HOME)/include/cuda_runtime.h exists. Without it the daemon has
# only the host backend. NO_CUDA=1 forces that.
CUDA_HOME?=/usr/local/cuda
ifneq ($(NO_CUDA),1)
ifneq ($(wildcard $(CUDA_HOME)/include/cuda_runtime.h),)
ifneq ($(wildcard fs/mem/cuda/*.c),)
HAVE_CUDA=1
endif
endif
endif
ifeq ($(HAVE_CUDA),1)
CUDA_CFLAGS=-isystem $(CUDA_HOME)/include
REAL_CFLAGS+=-DTFS_HAVE_CUDA
CUDA_LIBS=-L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart
# nvcc, where it is, builds the GPU's side of the sleep checksum (fs/mem/cuda/*.cu);
# without it the daemon sums on the host. PTX for compute 7.5 and up, code for 8.0 and 9.0.
NVCC?=$(CUDA_HOME)/bin/nvcc
NVCC_ARCH?=-gencode arch=compute_75,code=compute_75 -gencode arch=compute_80,code=sm_80 \
	-gencode arch=compute_90,code=sm_90
ifneq ($(NO_NVCC),1)
ifneq ($(wildcard $(NVCC)),)
HAVE_NVCC=1
REAL_CFLAGS+=-DTFS_HAVE_SUM_KERNEL
endif
endif
endif

# Three parts, each built from its own folders:
#   core/  code shared by the daemon, the library and tensorctl (metadata, commands,
#          dtypes, shapes, formats, Redis URLs, logging): libtfscore.a;
#   lib/   the public client library (tensorfs.h): libtensorfs.a/.so = lib/ + core/;
#   fs/    the daemon, one folder per layer (docs/layout.md), linked against core/
#          only, so the build keeps it from calling the client library.
CORE_SRCS=$(sort $(wildcard core/*.c))
LIB_SRCS=$(sort $(wildcard lib/*.c))
# fs/mem/cuda/: the CUDA backend, built only with CUDA.
FS_SRCS=$(sort $(wildcard fs/*.c fs/*/*.c fs/mem/keeper/*.c))
ifeq ($(HAVE_CUDA),1)
FS_SRCS+=$(sort $(wildcard fs/mem/cuda/*.c))
endif
TOOL_SRCS=$(sort $(wildcard tools/*.c))
UNIT_SRCS=$(sort $(wildcard tests/unit/*.c))
HELPER_SRCS=$(sort $(wildcard tests/integration/*.c))
# gpu_*.c need CUDA: tests/bench/gpu_bench.sh builds them with nvcc on the GPU machine.
BENCH_SRCS=$(filter-out tests/bench/gpu_%,$(sort $(wildcard tests/bench/*.c)))

CORE_OBJS=$(CORE_SRCS:%.c=$(O)/%.o)
LIB_OBJS=$(LIB_SRCS:%.c=$(O)/%.o)
FS_OBJS=$(FS_SRCS:%.c=$(O)/%.o)
ifeq ($(HAVE_NVCC),1)
FS_OBJS+=$(patsubst %.cu,$(O)/%.o,$(sort $(wildcard fs/mem/cuda/*.cu)))
endif
CORELIB=$(O)/libtfscore.a
STLIB=$(O)/libtensorfs.a
DYLIB=$(O)/libtensorfs.so
DAEMON=$(O)/tensorfs
TOOLS=$(TOOL_SRCS:tools/%.c=$(O)/%)
UNIT_TESTS=$(UNIT_SRCS:tests/unit/%.c=$(O)/tests/%)
HELPERS=$(HELPER_SRCS:tests/integration/%.c=$(O)/tests/%)
BENCHES=$(BENCH_SRCS:tests/bench/%.c=$(O)/bench/%)
LIB_LIBS=$(shell pkg-config --libs hiredis libcjson 2>/dev/null) -ldl -lrt

all: $(STLIB) $(DYLIB) $(DAEMON) $(TOOLS) $(UNIT_TESTS) $(HELPERS) $(BENCHES) $(O)/tensorfs.pc

# Header dependencies come from the compiler (-MMD -MP): editing a header rebuilds what
# includes it and nothing else.
-include $(shell find $(O) -name '*.d' 2>/dev/null)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(REAL_CFLAGS) $(if $(findstring fs/mem/cuda/,$<),$(CUDA_CFLAGS)) -c -o $@ $<

$(O)/%.o: %.cu core/tier.h
	@mkdir -p $(dir $@)
	$(NVCC) -O3 -std=c++17 $(NVCC_ARCH) -Xcompiler -fPIC,-fno-exceptions,-fno-threadsafe-statics -Ilib -Icore -Ifs -c -o $@ $<

$(CORELIB): $(CORE_OBJS)
	rm -f $@ && ar rcs $@ $^

$(STLIB): $(LIB_OBJS) $(CORE_OBJS)
	rm -f $@ && ar rcs $@ $^

# The shared library exports the calls of tensorfs.h and nothing else (lib/libtensorfs.map;
# tests/integration/build/t_exports.sh compares the two).
$(DYLIB): $(LIB_OBJS) $(CORE_OBJS) lib/libtensorfs.map
	$(CC) -shared -Wl,-soname,$(TFS_SONAME) -Wl,--version-script=lib/libtensorfs.map $(REAL_LDFLAGS) -o $@ $(LIB_OBJS) $(CORE_OBJS) $(LIB_LIBS)

DAEMON_LIBS=$(PKG_LIBS) $(CUDA_LIBS) -ldl -lrt
$(DAEMON): $(FS_OBJS) $(CORELIB)
	$(CC) $(REAL_LDFLAGS) -o $@ $^ $(DAEMON_LIBS)

# The daemon's objects but main.o: the CUDA backend's own test links them
# (tests/gpu/build_backend_test.sh), so that a new source file of the daemon reaches it
# without a list of sources there. daemon-libs: what they link with.
DAEMON_AR=$(O)/libtfsdaemon.a
$(DAEMON_AR): $(filter-out $(O)/fs/main.o,$(FS_OBJS))
	rm -f $@ && ar rcs $@ $^
all: $(DAEMON_AR)
daemon-libs:
	@echo $(DAEMON_LIBS)

$(O)/%: tools/%.c $(STLIB)
	@mkdir -p $(dir $@)
	$(CC) $(REAL_CFLAGS) -o $@ $^ $(REAL_LDFLAGS) $(LIB_LIBS)

$(O)/tests/%: tests/unit/%.c $(STLIB)
	@mkdir -p $(dir $@)
	$(CC) $(REAL_CFLAGS) -o $@ $< $(STLIB) $(REAL_LDFLAGS) $(LIB_LIBS)

$(O)/tests/%: tests/integration/%.c $(STLIB)
	@mkdir -p $(dir $@)
	$(CC) $(REAL_CFLAGS) -o $@ $< $(STLIB) $(REAL_LDFLAGS) $(LIB_LIBS)

# --- examples (libtensorfs client API): examples/*.c -> $(O)/examples/, part of all ---
EXAMPLE_SRCS=$(sort $(wildcard examples/*.c))
EXAMPLES=$(EXAMPLE_SRCS:examples/%.c=$(O)/examples/%)
all: $(EXAMPLES)
$(O)/examples/%: examples/%.c $(STLIB)
	@mkdir -p $(dir $@)
	$(CC) $(REAL_CFLAGS) -o $@ $< $(STLIB) $(REAL_LDFLAGS) $(LIB_LIBS)
# --- end examples ---

$(O)/bench/%: tests/bench/%.c $(STLIB)
	@mkdir -p $(dir $@)
	$(CC) $(REAL_CFLAGS) -o $@ $< $(STLIB) $(REAL_LDFLAGS) $(LIB_LIBS)

# The null FUSE filesystem of tests/bench/fusepath.sh: libfuse only.
$(O)/bench/nullfs: tests/bench/nullfs.c
	@mkdir -p $(dir $@)
	$(CC) $(REAL_CFLAGS) -o $@ $< $(REAL_LDFLAGS) $(PKG_LIBS)

$(O)/tensorfs.pc: Makefile
	@mkdir -p $(O)
	@echo "Generating $@ for pkgconfig..."
	@printf '%s\n' 'prefix=$(PREFIX)' 'exec_prefix=$${prefix}' \
	  'libdir=$${exec_prefix}/$(LIBDIR)' 'includedir=$${prefix}/$(INCLUDE_PATH)' '' \
	  'Name: tensorfs' 'Description: Open tensors shared through a tensorfs mount or its Redis queue' \
	  'Version: $(TFS_VERSION)' 'Requires.private: hiredis libcjson' \
	  'Libs: -L$${libdir} -ltensorfs' 'Libs.private: -ldl -lrt' 'Cflags: -I$${includedir}' > $@

# Debian packages the build, the daemon and the tests need (apt, as root or through sudo).
deps:
	scripts/install-deps.sh

# What needs root goes through sudo for a normal user, and runs as is for root (a fresh
# Debian 12 has no sudo).
SUDO:=$(shell [ "$$(id -u)" = 0 ] || echo sudo)

# The main job: a tensorfs mount at MOUNTPOINT with its own private redis-server.
MOUNTPOINT?=/mnt/tensors
# Sub-makes: on a fresh machine the pkg-config flags above are empty until deps ran. A
# normal user's daemon runs as that user (fusermount3 mounts for it) on a mount point it
# owns, so the mount is theirs.
run:
	scripts/install-deps.sh
	$(MAKE) all
	$(if $(SUDO),$(SUDO) install -d -o "$$(id -u)" -g "$$(id -g)" $(MOUNTPOINT),mkdir -p $(MOUNTPOINT))
	$(DAEMON) $(TFS_OPTS) $(MOUNTPOINT)
	@echo "tensorfs mounted on $(MOUNTPOINT); unmount with: fusermount3 -u $(MOUNTPOINT)"

# With LOCK_STATS: its code is then tested (lifecycle/t_sigterm_unmounts), under the sanitizers too.
asan:
	$(MAKE) O=build-asan SANITIZE=1 OPTIMIZATION=-O1 LOCK_STATS=1

# The test command of the README: builds both flavours, then unit and integration tests
# against a real redis-server and a real FUSE mount, under the ASan/UBSan build too. The
# builds are the user's; the tests need root (mounts, a second uid). JOBS=N: tests run at
# once (default: the CPU count; passed as -j, which sudo does not strip as it does the
# environment).
test:
	scripts/install-deps.sh
	$(MAKE) all
	$(MAKE) asan
	$(SUDO) tests/run.sh $(if $(JOBS),-j $(JOBS)) build build-asan

test-gpu: all
	tests/gpu/run.sh build

# The Python package alone (make test runs it too): venv, offline pip install, pytest.
test-python: all
	tests/python/run.sh build

bench: all
	$(SUDO) tests/bench/run.sh build

# libtensorfs: open-by-path latency beside PyTorch's CUDA IPC, tfs_read/tfs_write beside
# cudaMemcpy (issue 4; tests/bench/RESULTS-lib.md)
bench-lib: all
	tests/bench/lib_bench.sh build
.PHONY: bench-lib

install: all
	mkdir -p $(DESTDIR)$(PREFIX)/$(INCLUDE_PATH) $(DESTDIR)$(PREFIX)/$(LIBDIR) \
	  $(DESTDIR)$(PREFIX)/$(BINARY_PATH) $(DESTDIR)$(PREFIX)/$(PKGCONF_PATH)
	$(INSTALL) -m 644 lib/tensorfs.h $(DESTDIR)$(PREFIX)/$(INCLUDE_PATH)
	$(INSTALL) -m 644 $(STLIB) $(DESTDIR)$(PREFIX)/$(LIBDIR)
	$(INSTALL) -m 755 $(DYLIB) $(DESTDIR)$(PREFIX)/$(LIBDIR)/libtensorfs.so.$(TFS_VERSION)
	cd $(DESTDIR)$(PREFIX)/$(LIBDIR) && ln -sf libtensorfs.so.$(TFS_VERSION) $(TFS_SONAME) \
	  && ln -sf $(TFS_SONAME) libtensorfs.so
	# tensorfs.pc was made at build time: give it the PREFIX of this install
	sed 's|^prefix=.*|prefix=$(PREFIX)|' $(O)/tensorfs.pc > $(DESTDIR)$(PREFIX)/$(PKGCONF_PATH)/tensorfs.pc
	$(INSTALL) -m 755 $(DAEMON) $(TOOLS) $(DESTDIR)$(PREFIX)/$(BINARY_PATH)

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/$(INCLUDE_PATH)/tensorfs.h \
	  $(DESTDIR)$(PREFIX)/$(LIBDIR)/libtensorfs.* \
	  $(DESTDIR)$(PREFIX)/$(PKGCONF_PATH)/tensorfs.pc $(DESTDIR)$(PREFIX)/$(BINARY_PATH)/tensorfs \
	  $(TOOLS:$(O)/%=$(DESTDIR)$(PREFIX)/$(BINARY_PATH)/%)

clean:
	rm -rf build build-asan

.PHONY: daemon-libs all deps run asan test test-gpu test-python bench install uninstall clean

# --- tensorctl (issue 5): tools/tensorctl/*.c link into one binary, a front-end of
# libtensorfs (tfs_load/tfs_save; the format parsers are core/fmt_*.c). ---
CTL_SRCS=$(sort $(wildcard tools/tensorctl/*.c))
CTL_OBJS=$(CTL_SRCS:%.c=$(O)/%.o)
CTL=$(O)/tensorctl
ifneq ($(CTL_SRCS),)
all: $(CTL)
endif
$(CTL): $(CTL_OBJS) $(STLIB)
	$(CC) $(REAL_LDFLAGS) -o $@ $^ $(LIB_LIBS)
# The daemon's guarded copies (fs/util/guard.c), tested alone.
$(O)/tests/test_guard: tests/unit/test_guard.c $(O)/fs/util/guard.o
	@mkdir -p $(dir $@)
	$(CC) $(REAL_CFLAGS) -o $@ $< $(O)/fs/util/guard.o $(REAL_LDFLAGS)
# The host tier beside a device backend (fs/mem/tiers_backend.c) over the real host
# backend, without a keeper.
TB_OBJS=$(addprefix $(O)/fs/,mem/tiers_backend.o mem/backend_host.o mem/tiers.o \
	mem/backend_host_pool.o mem/host_pool.o mem/dirty_ranges.o mem/host_pack.o mem/pool.o mem/pool_check.o \
	mem/shm_sweep.o mem/keeper/keeper_client.o mem/keeper/keeper_host.o \
	mem/keeper/handover.o mem/keeper/keeper.o util/guard.o util/nofile.o util/clock.o)
$(O)/tests/test_tiers_backend: tests/unit/test_tiers_backend.c $(TB_OBJS) $(STLIB)
	@mkdir -p $(dir $@)
	$(CC) $(REAL_CFLAGS) -o $@ $< $(TB_OBJS) $(STLIB) $(REAL_LDFLAGS) $(LIB_LIBS)
# The VMM handle's ids (fs/mem/cuda/vmm_drv.c), tested alone where CUDA is built.
ifeq ($(HAVE_CUDA),1)
$(O)/tests/test_vmm_id: tests/unit/test_vmm_id.c $(O)/fs/mem/cuda/vmm_drv.o $(STLIB)
	@mkdir -p $(dir $@)
	$(CC) $(REAL_CFLAGS) $(CUDA_CFLAGS) -Ifs -o $@ $< $(O)/fs/mem/cuda/vmm_drv.o $(STLIB) $(REAL_LDFLAGS) $(LIB_LIBS)
endif
# tensorctl top's reading of the daemon's counters (topstats.c), tested alone.
$(O)/tests/test_topstats: tests/unit/test_topstats.c $(O)/tools/tensorctl/topstats.o $(STLIB)
	@mkdir -p $(dir $@)
	$(CC) $(REAL_CFLAGS) -Itools/tensorctl -o $@ $< $(O)/tools/tensorctl/topstats.o $(STLIB) $(REAL_LDFLAGS) $(LIB_LIBS)
install: install-tensorctl
install-tensorctl: $(CTL)
	mkdir -p $(DESTDIR)$(PREFIX)/$(BINARY_PATH) $(DESTDIR)$(PREFIX)/share/man/man1
	$(INSTALL) -m 755 $(CTL) $(DESTDIR)$(PREFIX)/$(BINARY_PATH)
	$(INSTALL) -m 644 docs/tensorctl.1 $(DESTDIR)$(PREFIX)/share/man/man1
uninstall: uninstall-tensorctl
uninstall-tensorctl:
	rm -f $(DESTDIR)$(PREFIX)/$(BINARY_PATH)/tensorctl $(DESTDIR)$(PREFIX)/share/man/man1/tensorctl.1
.PHONY: install-tensorctl uninstall-tensorctl
# --- end tensorctl ---

# --- the service (issue 17): the systemd unit, its options file, the daemon's man page.
# The unit goes where systemd looks for units of PREFIX (/usr/local/lib/systemd/system is
# on its path); the options file is the administrator's: written only when absent, and
# removed by uninstall only when unchanged.
SYSTEMD_UNIT_DIR?=$(PREFIX)/lib/systemd/system
SYSCONFDIR?=/etc
MAN8DIR?=$(PREFIX)/share/man/man8
install: install-service
install-service: $(DAEMON)
	mkdir -p $(DESTDIR)$(SYSTEMD_UNIT_DIR) $(DESTDIR)$(MAN8DIR) $(DESTDIR)$(SYSCONFDIR)/default
	sed 's|@BINDIR@|$(PREFIX)/$(BINARY_PATH)|g' systemd/tensorfs@.service.in > $(DESTDIR)$(SYSTEMD_UNIT_DIR)/tensorfs@.service
	chmod 644 $(DESTDIR)$(SYSTEMD_UNIT_DIR)/tensorfs@.service
	$(INSTALL) -m 644 docs/tensorfs.8 $(DESTDIR)$(MAN8DIR)
	# The options may name a Redis password: root's alone, also one kept from an older
	# install.
	[ -e $(DESTDIR)$(SYSCONFDIR)/default/tensorfs ] || \
	  $(INSTALL) -m 600 systemd/tensorfs.default $(DESTDIR)$(SYSCONFDIR)/default/tensorfs
	chmod go-rwx $(DESTDIR)$(SYSCONFDIR)/default/tensorfs
	if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi
uninstall: uninstall-service
uninstall-service:
	rm -f $(DESTDIR)$(SYSTEMD_UNIT_DIR)/tensorfs@.service $(DESTDIR)$(MAN8DIR)/tensorfs.8
	if cmp -s systemd/tensorfs.default $(DESTDIR)$(SYSCONFDIR)/default/tensorfs; then \
	  rm -f $(DESTDIR)$(SYSCONFDIR)/default/tensorfs; fi
	if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi
.PHONY: install-service uninstall-service
# --- end service ---
