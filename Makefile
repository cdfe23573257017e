# accelkit: one Makefile for every program.
#
#   make                 build every program into build/bin/
#   make check           install missing packages, run every test suite on CPU and PoCL
#   make check-gpu       the same suites on a GPU (fails without one); GPU_PART=1, 2, 3:
#                        a third of them each, for 10-minute device calls
#   make check SANITIZE=1   the same under AddressSanitizer and UBSan (objects in build/san/)
#   make check-gpu SANITIZE=cuda   the CUDA programs' suites under compute-sanitizer
#                        (memcheck, racecheck, synccheck; CUSAN_TOOLS picks; build/cusan/)
#   make check-scale     every program at its benchmark's size on a GPU, every way of
#                        running it (tests/scale/; fails without a GPU); SCALE_PART=1 or
#                        2 runs half (each fits one of the GPU machine's ten-minute
#                        calls); ACCELKIT_SCALE_DRY=1 runs it small on the CPU
#   SUITES="tests/a.bats ..."   only those suites (check, check-gpu)
#   FILTER=REGEX         only the tests whose names match (bats -f), e.g. to split a long
#                        suite over two of the GPU machine's ten-minute calls
#   SHARD=K/N            only the K-th of N shards of each suite (tests/shard): N runs
#                        side by side, or N calls, run each test once
#   make demo            run every program on the small data in testdata/
#   make install         PREFIX, DESTDIR, MANPREFIX, COMPDIR honoured
#   make deb             a Debian package, built portable in build/deb (packaging/mkdeb)
#   make CUDA=0          build without nvcc: CUDA programs run on the CPU only
#   make MPI=0           build without MPI: every run is one process (common/ranks.h)
#
# A program is cmd/PROG.c plus, when they exist, kernels/PROG_*.c (CPU code),
# kernels/PROG.cu and kernels/PROG_*.cu (CUDA, built when CUDA=1) and kernels/PROG.cl
# (OpenCL, embedded into the binary as a NUL-terminated array).

VERSION    := 0.1.0
PREFIX     ?= /usr/local
MANPREFIX  ?= $(PREFIX)/share/man
COMPDIR    ?= $(PREFIX)/share/bash-completion/completions
DESTDIR    ?=

SANITIZE   ?= 0
ifeq ($(SANITIZE),1)
BUILD      ?= build/san
# CUDA's runtime and ASan's shadow memory disagree; the GPU paths are proved by check-gpu.
CUDA       ?= 0
SANFLAGS   := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g
else ifeq ($(SANITIZE),cuda)
# -lineinfo puts source lines in compute-sanitizer's reports; the code is the same.
BUILD      ?= build/cusan
SANFLAGS   :=
CUSANFLAGS := -lineinfo
else
BUILD      ?= build
SANFLAGS   :=
endif

# CUDA: nvcc on PATH, else /usr/local/cuda; CUDA=0 forces a CPU-only build.
NVCC       ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
ifeq ($(strip $(NVCC)),)
CUDA       ?= 0
else
CUDA       ?= 1
endif
CUDA_HOME  ?= $(patsubst %/bin/nvcc,%,$(NVCC))
ifeq ($(SANITIZE)$(CUDA),cuda0)
$(error SANITIZE=cuda checks the CUDA code, and this build has none (no nvcc, or CUDA=0))
endif
# Real code for each architecture listed, plus PTX of the last for newer chips.
CUDA_ARCHS ?= 90
GENCODE    := $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
              -gencode arch=compute_$(lastword $(CUDA_ARCHS)),code=compute_$(lastword $(CUDA_ARCHS))

# MPI (common/ranks.c, for mpirun across hosts): on when mpicc is on PATH (Debian's
# libopenmpi-dev, which make deps installs), or MPI=1; MPI=0 leaves it out. The flags
# come from Open MPI's `mpicc --showme'; another MPI: set MPI_CFLAGS and MPI_LIBS.
# MPI's calls are a plugin, BUILD/lib/accelkit/accelkit-mpi.so (common/mpi/ranks_mpi.c),
# that ranks.c loads only under a launcher: linked into every program, Open MPI's
# libraries cost each plain run about 1 ms of dynamic loading (2.3 ms against 1.5 for
# editdist4r on one pair, 2026-11-29).
MPICC      ?= $(shell command -v mpicc 2>/dev/null)
ifeq ($(strip $(MPICC)),)
MPI        ?= 0
else
MPI        ?= 1
endif
ifeq ($(MPI),1)
MPICC      := $(or $(MPICC),mpicc)
MPI_CFLAGS ?= $(shell $(MPICC) --showme:compile)
MPI_LIBS   ?= $(shell $(MPICC) --showme:link)
MPI_CPP    := -DACCELKIT_MPI=1
MPI_PLUGIN := $(BUILD)/lib/accelkit/accelkit-mpi.so
endif

CC         ?= cc
CPU_ARCH   ?= native

# Compressed input (common/decompress.c): each library where a program using it links
# (make deps installs them on Debian), or forced: ZLIB=0, ZSTD=0, XZ=0, BZIP2=0, ISAL=0.
# Without one, input in its format is an error saying so.
have_lib    = $(shell echo 'int main(void) { return 0; }' | $(CC) -include $(1) -x c - \
              -o /dev/null -l$(2) >/dev/null 2>&1 && echo 1 || echo 0)
ZLIB       ?= $(call have_lib,zlib.h,z)
ZSTD       ?= $(call have_lib,zstd.h,zstd)
XZ         ?= $(call have_lib,lzma.h,lzma)
BZIP2      ?= $(call have_lib,bzlib.h,bz2)
# gzip through ISA-L's igzip (libisal-dev) where it links, 2.5 times zlib's speed
ISAL       ?= $(call have_lib,isa-l/igzip_lib.h,isal)
ISAL       := $(ISAL)
ZLIB       := $(ZLIB)
ZSTD       := $(ZSTD)
XZ         := $(XZ)
BZIP2      := $(BZIP2)
Z_CPP      := -DACCELKIT_ZLIB=$(ZLIB) -DACCELKIT_ZSTD=$(ZSTD) -DACCELKIT_XZ=$(XZ) \
              -DACCELKIT_BZIP2=$(BZIP2) -DACCELKIT_ISAL=$(ISAL)
Z_LIBS     := $(if $(filter 1,$(ISAL)),-lisal,$(if $(filter 1,$(ZLIB)),-lz)) \
              $(if $(filter 1,$(ZSTD)),-lzstd) $(if $(filter 1,$(XZ)),-llzma) \
              $(if $(filter 1,$(BZIP2)),-lbz2)
# decompress.c is compiled for the libraries found: a stamp of them, rewritten when they
# change (make deps installs one), rebuilds it, where a build from before would link
# against a library its object no longer calls (or miss one it does)
ZSTAMP     := $(BUILD)/gen/zlibs.stamp
ZSTAMP_NOW := $(Z_CPP) $(Z_LIBS)
$(shell mkdir -p $(BUILD)/gen && { [ "$$(cat $(ZSTAMP) 2>/dev/null)" = '$(ZSTAMP_NOW)' ] || \
	echo '$(ZSTAMP_NOW)' > $(ZSTAMP); })
CPPFLAGS   += -Icommon -Ikernels -I$(BUILD)/gen -D_GNU_SOURCE -DCL_TARGET_OPENCL_VERSION=120 \
              -DACCELKIT_VERSION='"$(VERSION)"' $(MPI_CPP) $(Z_CPP)
CFLAGS     ?= -O3 -march=$(CPU_ARCH)
CFLAGS     += -std=c11 -Wall -Wextra -fopenmp -MMD -MP $(SANFLAGS)
LDFLAGS    += -fopenmp $(SANFLAGS)
LDLIBS     += $(Z_LIBS) -ldl -lm
NVCCFLAGS  ?= -O3
NVCCFLAGS  += -std=c++17 $(GENCODE) -Icommon -Ikernels -DACCELKIT_CUDA=1 -MMD -MP \
              -Xcompiler -Wall,-Wextra -Xptxas -warn-spills $(CUSANFLAGS)
ifeq ($(CUDA),1)
CPPFLAGS   += -DACCELKIT_CUDA=1 -I$(CUDA_HOME)/include
# libstdc++ (which the static CUDA runtime needs) is linked statically: loading the shared
# one cost every run 0.4 ms of relocations and start-up (1.75 -> 1.39 ms for --version on
# the 2-core machine), more than a whole short editdist4r job's difference from edlib.
CUDA_LIBS  := -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lpthread \
              -Wl,-Bstatic -lstdc++ -Wl,-Bdynamic
endif

PROGS      := $(sort $(basename $(notdir $(wildcard cmd/*.c))))
LIB        := $(BUILD)/libaccelkit.a
LIB_OBJS   := $(patsubst common/%.c,$(BUILD)/common/%.o,$(wildcard common/*.c))
TESTBINS   := $(BUILD)/test/acctest $(BUILD)/test/gmmtc $(BUILD)/test/tunerows \
              $(BUILD)/test/mapshim.so $(if $(filter 1,$(CUDA)),$(BUILD)/test/edbp)
# docsim's GEMM kernels against a CPU reference (a CUDA build's; docsim.bats, GPU only)
ifeq ($(CUDA),1)
TESTBINS   += $(BUILD)/test/docsim_mm
endif

all: $(addprefix $(BUILD)/bin/,$(PROGS)) $(MPI_PLUGIN)

$(MPI_PLUGIN): common/mpi/ranks_mpi.c common/ranks_mpi.h
	@mkdir -p $(@D)
	$(CC) -O2 -std=c11 -Wall -Wextra -fPIC -shared $(SANFLAGS) -Icommon $(MPI_CFLAGS) \
		-o $@ $< $(MPI_LIBS)
.PHONY: all check check-gpu check-scale demo deps install uninstall deb clean testbins lint-man $(PROGS)

# clkmeans's OpenCL program: these files, concatenated in this order (clkmeans_defs.cl).
clkmeans_CL_PARTS := $(addprefix kernels/clkmeans_,defs.cl assign.cl exact.cl update.cl \
	seed.cl)
# clmatmul's: its kernels, then gemm_wgmma's (clmatmul_wgmma.cl, Hopper only).
clmatmul_CL_PARTS := kernels/clmatmul.cl kernels/clmatmul_wgmma.cl

# One set of rules a program: `make docsim` builds just that one.
define prog_rules
$(1)_C   := $$(wildcard kernels/$(1)_*.c)
$(1)_CU  := $$(if $$(filter 1,$$(CUDA)),$$(wildcard kernels/$(1).cu kernels/$(1)_*.cu))
$(1)_CL  := $$(or $$($(1)_CL_PARTS),$$(wildcard kernels/$(1).cl))
$(1)_OBJS := $(BUILD)/cmd/$(1).o \
	$$(patsubst kernels/%.c,$(BUILD)/kernels/%.o,$$($(1)_C)) \
	$$(patsubst kernels/%.cu,$(BUILD)/kernels/%.cu.o,$$($(1)_CU)) \
	$$(if $$($(1)_CL),$(BUILD)/gen/$(1)_cl.o)
$(BUILD)/bin/$(1): $$($(1)_OBJS) $(LIB)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS) -o $$@ $$($(1)_OBJS) $(LIB) \
		$$(if $$($(1)_CL),-ldl) $$(if $$($(1)_CU),$$(CUDA_LIBS)) $$(LDLIBS)
$(1): $(BUILD)/bin/$(1)
endef
$(foreach p,$(PROGS),$(eval $(call prog_rules,$(p))))

# editdist4r's wide block steps: each file its own instructions, called only where the
# CPU has them (editdist4r_band.c asks at run time), so a portable build keeps them.
$(BUILD)/kernels/editdist4r_band_avx2.o: CFLAGS += -mavx2 -mno-avx512f
$(BUILD)/kernels/editdist4r_band_avx512.o: CFLAGS += -mavx512f

$(LIB): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/kernels/%.cu.o: kernels/%.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -c -o $@ $<

# OpenCL sources become C arrays: kernels/foo.cl -> build/gen/foo_cl.c defining foo_cl[]
# (and foo_cl_files[], the files' names). A program of several files (foo_CL_PARTS, above)
# is embedded as one source, its files in order. One rule for all: cl_embed NAME FILES.
$(BUILD)/tools/embed: tools/embed.c
	@mkdir -p $(@D)
	$(CC) -O2 -o $@ $<
define cl_embed
$(BUILD)/gen/$(1)_cl.c: $(2) $(BUILD)/tools/embed
	@mkdir -p $$(@D)
	$(BUILD)/tools/embed $(1)_cl $(2) > $$@.tmp && mv $$@.tmp $$@
endef
$(foreach p,$(PROGS),$(if $($(p)_CL),$(eval $(call cl_embed,$(p),$($(p)_CL)))))
$(eval $(call cl_embed,acctest,tests/acctest.cl))
$(BUILD)/gen/%_cl.o: $(BUILD)/gen/%_cl.c
	$(CC) $(CFLAGS) -c -o $@ $<

# The shared library's test driver: built for tests only, never installed.
testbins: $(TESTBINS)
$(BUILD)/test/acctest: $(BUILD)/tests/acctest.o $(BUILD)/gen/acctest_cl.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ -ldl $(CUDA_LIBS) $(LDLIBS)
# gmmscore's tensor-core path, its packing and bounds checked on the CPU (gmmscore.bats)
$(BUILD)/test/gmmtc: $(BUILD)/tests/gmmtc.o $(BUILD)/kernels/gmmscore_pack.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
# the OpenCL libraries a run mapped, at its exit (LD_PRELOAD; clmatmul.bats)
$(BUILD)/test/mapshim.so: tests/mapshim.c
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -shared -fPIC -o $@ $<
# docsim's GEMM kernels, each against a long double product on the CPU, and the TF32
# lists ranked by the product against float64 scores (docsim.bats)
$(BUILD)/tests/%.cu.o: tests/%.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -c -o $@ $<
$(BUILD)/test/docsim_mm: $(BUILD)/tests/docsim_mm.cu.o $(BUILD)/kernels/docsim_mma.cu.o \
		$(BUILD)/kernels/docsim_topk_tc.cu.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS) $(LDLIBS)
# editdist4r's bit-parallel GPU engines run on the CPU (editdist4r_gpu_modes.bats)
$(BUILD)/test/edbp: tests/editdist4r_bp.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -o $@ $<
# the tuning tables' legality checks, a program's rows at a time (PROG.bats)
$(BUILD)/test/tunerows: $(BUILD)/tests/tunerows.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

deps:
	@tools/deps

check: deps all testbins
	@SANITIZE=$(SANITIZE) FILTER='$(FILTER)' SHARD='$(SHARD)' tests/run $(BUILD) $(SUITES)

# make check-gpu GPU_PART=1|2|3 (tests/README): the suites in three parts of about equal
# GPU-machine time, each for one device call of 10 minutes; the long suites in shards
# side by side (tests/run's SUITE.bats@N). Part 3 is every suite the others do not name.
GPU_PART_1 := tests/docsim.bats@4 tests/skyline.bats@2 tests/gmmscore.bats tests/input.bats
GPU_PART_2 := tests/clmatmul.bats@4 tests/clkmeans.bats@4
GPU_PART_3  = $(filter-out $(foreach s,$(GPU_PART_1) $(GPU_PART_2),$(firstword $(subst @, ,$(s)))), \
	$(sort $(wildcard tests/*.bats)))
check-gpu: all testbins
	@$(if $(filter-out 1 2 3,$(GPU_PART)),echo "check-gpu: GPU_PART must be 1 2 or 3 (or unset)" >&2; exit 2;,)
	@SANITIZE=$(SANITIZE) FILTER='$(FILTER)' SHARD='$(SHARD)' tests/run --gpu $(BUILD) \
		$(or $(SUITES),$(if $(GPU_PART),$(GPU_PART_$(GPU_PART))))

# make check-scale (tests/README): its suites in two parts of about equal GPU-machine
# time; SUITES= or FILTER= pick within them as for check. ACCELKIT_SCALE_DRY=1: sizes
# shrunk and every run on the CPU, to try the suites and their references anywhere.
SCALE_PART_1 := tests/scale/docsim.bats tests/scale/gmmscore.bats tests/scale/skyline.bats
SCALE_PART_2 := tests/scale/docsim_options.bats tests/scale/editdist4r.bats \
	tests/scale/clkmeans.bats tests/scale/clmatmul.bats
SCALE_SUITES  = $(or $(SUITES),$(if $(SCALE_PART),$(SCALE_PART_$(SCALE_PART)),$(SCALE_PART_1) $(SCALE_PART_2)))
check-scale: all
	@$(if $(filter-out 1 2,$(SCALE_PART)),echo "check-scale: SCALE_PART must be 1 or 2" >&2; exit 2;,)
	@if [ "$(ACCELKIT_SCALE_DRY)" != 1 ] && ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then \
		echo "check-scale: no GPU here (nvidia-smi -L lists none); ACCELKIT_SCALE_DRY=1 tries it small on the CPU" >&2; \
		echo "0 passed, 1 failed"; exit 1; fi
	@ACCELKIT_SCALE_DRY='$(ACCELKIT_SCALE_DRY)' FILTER='$(FILTER)' SHARD='$(SHARD)' \
		tests/run $(if $(filter 1,$(ACCELKIT_SCALE_DRY)),,--gpu) $(BUILD) $(SCALE_SUITES)

demo: deps all
	@tools/demo $(BUILD)/bin

lint-man:
	mandoc -Tlint -Wwarning man/*.[17]

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANPREFIX)/man1 $(DESTDIR)$(MANPREFIX)/man7
	$(if $(PROGS),install -m 755 $(addprefix $(BUILD)/bin/,$(PROGS)) $(DESTDIR)$(PREFIX)/bin/)
	$(if $(wildcard man/*.1),install -m 644 $(wildcard man/*.1) $(DESTDIR)$(MANPREFIX)/man1/)
	install -m 644 man/accelkit.7 $(DESTDIR)$(MANPREFIX)/man7/
	install -d $(DESTDIR)$(COMPDIR)
	install -m 644 completion/accelkit.bash $(DESTDIR)$(COMPDIR)/accelkit
	for p in $(PROGS); do ln -sf accelkit $(DESTDIR)$(COMPDIR)/$$p || exit 1; done
	$(if $(MPI_PLUGIN),install -d $(DESTDIR)$(PREFIX)/lib/accelkit)
	$(if $(MPI_PLUGIN),install -m 644 $(MPI_PLUGIN) $(DESTDIR)$(PREFIX)/lib/accelkit/)

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/bin/,$(PROGS))
	rm -f $(addprefix $(DESTDIR)$(MANPREFIX)/man1/,$(notdir $(wildcard man/*.1)))
	rm -f $(DESTDIR)$(MANPREFIX)/man7/accelkit.7
	rm -f $(addprefix $(DESTDIR)$(COMPDIR)/,accelkit $(PROGS))
	rm -f $(DESTDIR)$(PREFIX)/lib/accelkit/accelkit-mpi.so
	-rmdir $(DESTDIR)$(PREFIX)/lib/accelkit 2>/dev/null

# The package's programs are built apart, for any x86-64 (not -march=native) and with
# Debian's hardening flags; DEB_CPU_ARCH=native makes one for this machine's CPU.
DEB_BUILD    ?= build/deb
DEB_CPU_ARCH ?= x86-64
deb:
	CFLAGS='-O3 -march=$(DEB_CPU_ARCH) -fstack-protector-strong -Wformat -Werror=format-security' \
	CPPFLAGS='-D_FORTIFY_SOURCE=2' LDFLAGS='-Wl,-z,relro -Wl,-z,now' \
		$(MAKE) BUILD=$(DEB_BUILD) CPU_ARCH=$(DEB_CPU_ARCH) SANITIZE=0 all
	packaging/mkdeb $(DEB_BUILD) $(VERSION)

clean:
	rm -rf build

# ---- Fuzzing (tests/fuzz/README) ----
#   make fuzz                  build the libFuzzer targets (clang) and their seed corpora
#   make fuzz FUZZ_SECONDS=N   ... and run each target for N seconds (FUZZ_JOBS at once)
# A target is tests/fuzz/NAME.c; fuzz_seeds_NAME lists its seeds from testdata/, beside
# those in tests/fuzz/seeds/NAME/. make check runs the regression cases in
# tests/fuzz/regress/NAME/ through $(BUILD)/test/fuzz-NAME: the same target with
# tests/fuzz/driver.c for main(), built by $(CC), with no clang needed.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 0
FUZZ_JOBS    ?= 1
FUZZ_DIR     := build/fuzz
FUZZ_TARGETS := $(sort $(filter-out fuzz driver,$(basename $(notdir $(wildcard tests/fuzz/*.c)))))
# common/ without OpenMP's pragmas: one thread, and no runtime state allocated inside a
# run that fails (the harness frees what a failed run leaves). The omp_* API still links.
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := -std=c11 -g -O1 -fno-omit-frame-pointer -Wall -Wextra \
                -Wno-source-uses-openmp -MMD -MP $(FUZZ_SAN)
# Once common/input.c lets IN_CHUNK be set from outside (#ifndef IN_CHUNK), a small one:
# small inputs then cross buffer refills, and runs are ~20x faster (no 4 MiB buffer
# for ASan to poison per input). GMM_PAR_BYTES=0: the model readers split even a
# fuzzer's small input into the -j threads' shares (common/gmm_read.h). UNZ_THREAD=0:
# compressed input decompressed in the reader's thread, none left running by an error
# exit that the harness returns from (common/decompress.c).
FUZZ_CPP     := $(filter-out -DACCELKIT_CUDA=1 -I$(CUDA_HOME)/include $(MPI_CPP),$(CPPFLAGS)) -Itests/fuzz \
                $(if $(shell grep -s 'ifndef IN_CHUNK' common/input.c),-DIN_CHUNK=64) \
                -DGMM_PAR_BYTES=0 -DUNZ_THREAD=0
FUZZDRV      := $(BUILD)/fuzzdrv
FUZZDRV_CFLAGS := -std=c11 -g -O1 -Wall -Wextra -Wno-unknown-pragmas -MMD -MP $(SANFLAGS)
$(BUILD)/common/decompress.o $(FUZZDRV)/common/decompress.o $(FUZZ_DIR)/obj/common/decompress.o: $(ZSTAMP)

fuzz_seeds_dense  := testdata/clmatmul/a.txt testdata/clmatmul/b.txt testdata/clmatmul/c.txt \
                     testdata/clkmeans/points.txt testdata/clkmeans/centroids.txt \
                     testdata/skyline/points.txt testdata/skyline/places.txt
fuzz_seeds_seq    := testdata/editdist4r/reads.fa testdata/editdist4r/refs.fa \
                     testdata/editdist4r/reads.fq testdata/editdist4r/pairs.txt
fuzz_seeds_pairs  := testdata/editdist4r/pairs.txt
fuzz_seeds_htk    := testdata/gmmscore/feats.htk
fuzz_seeds_ark    := testdata/gmmscore/feats.ark
fuzz_seeds_speech := testdata/gmmscore/feats.htk testdata/gmmscore/feats.ark
fuzz_seeds_num    := testdata/clkmeans/centroids.txt
fuzz_seeds_gmm    := testdata/gmmscore/final.mdl.txt testdata/gmmscore/hmms.mmf \
                     testdata/gmmscore/models.txt
fuzz_seeds_unz    := tests/fuzz/seeds/dense/points.txt.gz tests/fuzz/seeds/seq/reads.fa.zst \
                     tests/fuzz/seeds/pairs/pairs.txt.xz tests/fuzz/seeds/speech/feats.ark.bz2
fuzz_seeds_tokenize := testdata/docsim/corpus.txt testdata/docsim/queries.txt \
                     testdata/docsim/unicode.txt testdata/docsim/stop.txt

.PHONY: fuzz
fuzz: $(addprefix $(FUZZ_DIR)/bin/,$(FUZZ_TARGETS)) \
      $(foreach t,$(FUZZ_TARGETS),$(FUZZ_DIR)/seeds/$(t)/.stamp)
	@if [ "$(FUZZ_SECONDS)" -gt 0 ]; then \
		tests/fuzz/campaign -s $(FUZZ_SECONDS) -j $(FUZZ_JOBS) $(FUZZ_TARGETS); fi

$(FUZZ_DIR)/libcommon.a: $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(wildcard common/*.c))
	rm -f $@
	$(AR) rcs $@ $^
$(FUZZ_DIR)/obj/common/%.o: common/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CPP) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<
$(FUZZ_DIR)/obj/tests/fuzz/%.o: tests/fuzz/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CPP) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<
# The harness itself is left out of the coverage the fuzzer steers by.
$(FUZZ_DIR)/obj/tests/fuzz/fuzz.o: tests/fuzz/fuzz.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CPP) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZDRV)/libcommon.a: $(patsubst %.c,$(FUZZDRV)/%.o,$(wildcard common/*.c))
	rm -f $@
	$(AR) rcs $@ $^
$(FUZZDRV)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(FUZZ_CPP) $(FUZZDRV_CFLAGS) -c -o $@ $<

define fuzz_rules
$(FUZZ_DIR)/bin/$(1): $(FUZZ_DIR)/obj/tests/fuzz/$(1).o $(FUZZ_DIR)/obj/tests/fuzz/fuzz.o \
		$(FUZZ_DIR)/libcommon.a
	@mkdir -p $$(@D)
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $$@ $$^ -fopenmp -lpthread $(Z_LIBS) $(if $(filter 1,$(ZLIB)),-lz) -lm
$(FUZZ_DIR)/seeds/$(1)/.stamp: $$(fuzz_seeds_$(1)) $$(wildcard tests/fuzz/seeds/$(1)/*)
	rm -rf $$(@D) && mkdir -p $$(@D)
	$$(foreach f,$$^,cp $$(f) $$(@D)/$$(subst /,_,$$(f)) &&) touch $$@
$(BUILD)/test/fuzz-$(1): $(FUZZDRV)/tests/fuzz/$(1).o $(FUZZDRV)/tests/fuzz/fuzz.o \
		$(FUZZDRV)/tests/fuzz/driver.o $(FUZZDRV)/libcommon.a
	@mkdir -p $$(@D)
	$(CC) $(SANFLAGS) -o $$@ $$^ -fopenmp -lpthread $(Z_LIBS) $(if $(filter 1,$(ZLIB)),-lz) -lm
testbins: $(BUILD)/test/fuzz-$(1)
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call fuzz_rules,$(t))))
-include $(shell find $(FUZZ_DIR) -name '*.d' 2>/dev/null | grep -v '^$(BUILD)/')

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
