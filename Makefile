# layerwise — build, run, test, bench.
# `make run` and `make test` install missing system packages first (make deps).

CC       ?= cc
PREFIX   ?= /usr/local
BUILD    ?= build
PKGS     := libcjson libgvc ncursesw cairo libprotobuf-c
CFLAGS   ?= -O2 -g
override CFLAGS += -std=c11 -Wall -Wextra -Wshadow -Wno-unused-parameter -D_DEFAULT_SOURCE \
            -DLW_DATADIR='"$(PREFIX)/share/layerwise"' -DLW_DOCDIR='"$(PREFIX)/share/doc/layerwise"' -Isrc -Iui -I$(BUILD)/gen
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
LDLIBS   += $(PKG_LIBS) -lm -lpthread

ENGINE_SRC := $(wildcard src/*.c)
UI_SRC     := $(filter-out ui/main.c,$(wildcard ui/*.c))
DATA       := $(wildcard data/networks/*.json data/clusters/*.json data/stacks/*.json data/profiles/*.json)
TEST_SRC   := $(wildcard tests/test_*.c)

ENGINE_OBJ := $(ENGINE_SRC:%.c=$(BUILD)/%.o) $(BUILD)/embedded.o $(BUILD)/gen/onnx.pb-c.o
UI_OBJ     := $(UI_SRC:%.c=$(BUILD)/%.o)

.PHONY: all run test check deps deps-build bench clean install install-tests tests-bin asan-tests cli-tests doc-tests screen-tests e2e-tests \
        screenshots reproduce fuzz check-fuzz valgrind diagrams calibrate validate networks

all: deps-build
	@$(MAKE) --no-print-directory $(BUILD)/layerwise $(BUILD)/layerwise.1

# ---- system packages -------------------------------------------------------
# Debian package per pkg-config module / command; only what is missing is
# installed (apt-get, as root). `make` needs the build libraries (deps-build);
# `make run` and `make test` need everything (deps).
BUILD_MODS := libcjson:libcjson-dev libgvc:libgraphviz-dev ncursesw:libncurses-dev cairo:libcairo2-dev \
              libprotobuf-c:libprotobuf-c-dev
BUILD_CMDS := pkg-config:pkg-config protoc-c:protobuf-c-compiler
# files no pkg-config module or command stands for: ONNX's schema, from which
# the reader's C code is generated at build time (protoc-c)
ONNX_PROTO  ?= /usr/include/onnx/onnx.proto
BUILD_FILES := $(ONNX_PROTO):libonnx-dev
ALL_MODS   := $(BUILD_MODS) criterion:libcriterion-dev
ALL_CMDS   := $(BUILD_CMDS) tmux:tmux dot:graphviz python3:python3
define install_missing
	@missing=""; \
	command -v pkg-config >/dev/null || missing="$$missing pkg-config"; \
	for m in $(1); do \
	  pkg-config --exists $${m%%:*} 2>/dev/null || missing="$$missing $${m#*:}"; \
	done; \
	for m in $(2); do \
	  command -v $${m%%:*} >/dev/null || case " $$missing " in *" $${m#*:} "*) ;; *) missing="$$missing $${m#*:}";; esac; \
	done; \
	for m in $(BUILD_FILES); do \
	  [ -f $${m%%:*} ] || missing="$$missing $${m#*:}"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make: installing$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "make: these Debian packages are missing:$$missing; install them as root (sudo make deps)" >&2; exit 1; fi; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing) >/dev/null || \
	    { echo "make: apt-get install$$missing failed" >&2; exit 1; }; \
	fi
endef

deps:
	$(call install_missing,$(ALL_MODS),$(ALL_CMDS))

deps-build:
	$(call install_missing,$(BUILD_MODS),$(BUILD_CMDS))

# ---- the program -----------------------------------------------------------
$(BUILD)/%.o: %.c $(wildcard src/*.h ui/*.h) | $(BUILD)/src $(BUILD)/ui $(BUILD)/tests
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(BUILD)/src $(BUILD)/ui $(BUILD)/tests $(BUILD)/gen:
	@mkdir -p $@

# The ONNX reader's protobuf-c code, generated from the system's onnx.proto
# (libonnx-dev), never checked in.
$(BUILD)/gen/onnx.pb-c.c $(BUILD)/gen/onnx.pb-c.h &: $(ONNX_PROTO) | $(BUILD)/gen
	protoc-c --proto_path=$(dir $(ONNX_PROTO)) --c_out=$(BUILD)/gen $(ONNX_PROTO)

$(BUILD)/gen/onnx.pb-c.o: $(BUILD)/gen/onnx.pb-c.c $(BUILD)/gen/onnx.pb-c.h
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c $< -o $@

# every part of the importer includes the generated header (src/onnx_internal.h)
$(filter $(BUILD)/src/onnx_%.o,$(ENGINE_OBJ)): $(BUILD)/gen/onnx.pb-c.h

# The shipped data, compiled in so the program runs from anywhere.
$(BUILD)/embedded.c: $(DATA) | $(BUILD)/src
	@{ echo '#include "embedded.h"'; i=0; \
	  for f in $(DATA); do \
	    echo "static const unsigned char d$$i[] = {"; od -An -v -tx1 $$f | sed 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; echo "0};"; \
	    i=$$((i+1)); done; \
	  echo 'const lw_embedded_file lw_embedded_files[] = {'; i=0; \
	  for f in $(DATA); do echo "{\"$${f#data/}\", d$$i, sizeof d$$i - 1},"; i=$$((i+1)); done; \
	  echo '{0, 0, 0}};'; echo "const int lw_embedded_count = $$i;"; } > $@.tmp && mv $@.tmp $@

$(BUILD)/embedded.o: $(BUILD)/embedded.c src/embedded.h
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/layerwise: $(ENGINE_OBJ) $(UI_OBJ) $(BUILD)/ui/main.o
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# The man page layerwise(1), written from the option table in
# src/cli_options.c (the one --help is written from) by a generator built
# from that file alone: `man -l build/layerwise.1`.
$(BUILD)/layerwise-doc: src/cli_options.c src/cli_options.h src/settings.h | $(BUILD)/src
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -DLW_CLI_OPTIONS_MAIN -o $@ src/cli_options.c

$(BUILD)/layerwise.1: $(BUILD)/layerwise-doc
	$(BUILD)/layerwise-doc --man > $@.tmp && mv $@.tmp $@

run: deps
	@$(MAKE) --no-print-directory $(BUILD)/layerwise $(BUILD)/layerwise.1
	$(BUILD)/layerwise

# The program, and the shipped data under PREFIX/share/layerwise/KIND/ (the
# program also looks in BINDIR/../share/layerwise, so a copy made for one
# PREFIX finds its data in another), the man page in PREFIX/share/man/man1
# and the manual's pages (data/doc/*.md) in PREFIX/share/doc/layerwise.
# `make install-tests` checks it.
install: $(BUILD)/layerwise $(BUILD)/layerwise.1
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/layerwise $(DESTDIR)$(PREFIX)/bin/layerwise
	install -m 644 $(BUILD)/layerwise.1 $(DESTDIR)$(PREFIX)/share/man/man1/layerwise.1
	@set -e; for f in $(DATA) $(wildcard data/published/*.json); do \
	  d=$(DESTDIR)$(PREFIX)/share/layerwise/$$(dirname $${f#data/}); \
	  install -d "$$d"; install -m 644 "$$f" "$$d/"; \
	done
	install -d $(DESTDIR)$(PREFIX)/share/doc/layerwise
	install -m 644 $(wildcard data/doc/*.md) $(DESTDIR)$(PREFIX)/share/doc/layerwise/

# ---- tests -----------------------------------------------------------------
TEST_LIBS = $(shell pkg-config --libs criterion 2>/dev/null)
TEST_BINS := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)

# The export tests also parse the SVG they write with libxml2 where it is
# installed (they run a small checker of their own either way). `private`:
# the engine objects built for that test must not get these flags.
ifneq ($(shell pkg-config --exists libxml-2.0 2>/dev/null && echo y),)
$(BUILD)/tests/test_export: private PKG_CFLAGS += -DLW_HAVE_LIBXML2 $(shell pkg-config --cflags libxml-2.0)
$(BUILD)/tests/test_export: private TEST_LIBS += $(shell pkg-config --libs libxml-2.0)
endif

$(BUILD)/tests/%: tests/%.c $(ENGINE_OBJ) $(UI_OBJ) $(wildcard tests/*.h)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -Itests -o $@ $< $(ENGINE_OBJ) $(UI_OBJ) $(TEST_LIBS) $(LDLIBS)

tests-bin: $(TEST_BINS) $(BUILD)/layerwise

# Unit and screen tests (and tests/sizes.py: no function over 100 lines or
# struct over 30 fields grows unseen; tests/deps.py: no circle among the
# modules of src/ and ui/, no read of the cost model from ui/), then the same under ASan+UBSan, then the CLI and
# end-to-end tests against the real binary.
test: deps
	@$(MAKE) --no-print-directory tests-bin
	@$(MAKE) --no-print-directory check
	@$(MAKE) --no-print-directory asan-tests
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/asan CFLAGS="$(ASAN_FLAGS)" fuzz-replay
	@$(MAKE) --no-print-directory cli-tests
	@$(MAKE) --no-print-directory doc-tests
	@$(MAKE) --no-print-directory install-tests
	@$(MAKE) --no-print-directory e2e-tests

check: tests-bin
	@set -e; for t in $(TEST_BINS); do echo "== $$t"; $$t --jobs 2 || exit 1; done
	@python3 tests/sizes.py
	@python3 tests/deps.py

# Under ASan the tests run one at a time: with two at once, Criterion's own
# runner (main -> criterion_run_all_tests, nothing of ours on the stack)
# leaks 48 bytes when some tests overlap (test_oom's sweeps, test_tui_edges'
# FIFO test beside another), and LSan fails the run; a suppression wide
# enough to name it would hide leaks of ours in every test.
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
asan-tests:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/asan CFLAGS="$(ASAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" tests-bin
	@set -e; for t in $(TEST_SRC:tests/%.c=$(BUILD)/asan/tests/%); do echo "== (asan) $$t"; \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 $$t --jobs 1 || exit 1; done

# The shipped transformer networks, written by the program's own generator
# (`layerwise net`); tests/test_netgen.c checks the files equal what it
# writes, so edit src/netgen.c and run this, never the files.
networks: $(BUILD)/layerwise
	$(BUILD)/layerwise net gpt -o data/networks/gpt2.json
	$(BUILD)/layerwise net gpt --layers 48 --hidden 1600 --heads 25 -o data/networks/gpt2_xl.json
	$(BUILD)/layerwise net bert --layers 24 --hidden 1024 --heads 16 -o data/networks/bert_large.json
	$(BUILD)/layerwise net llama -o data/networks/llama2_7b.json
	$(BUILD)/layerwise net vit -o data/networks/vit_b16.json

cli-tests: $(BUILD)/layerwise
	@LW=$(BUILD)/layerwise bash tests/cli_test.sh

# --help, the man page and the option table agree; every option the parser
# takes and every environment variable the program reads is documented.
doc-tests: $(BUILD)/layerwise $(BUILD)/layerwise.1 $(BUILD)/layerwise-doc
	@LW=$(BUILD)/layerwise DOC=$(BUILD)/layerwise-doc MAN=$(BUILD)/layerwise.1 bash tests/doc_test.sh

install-tests: $(BUILD)/layerwise
	@MAKE="$(MAKE)" BUILD=$(BUILD) bash tests/install_test.sh

e2e-tests: $(BUILD)/layerwise
	@if [ -f tests/e2e_test.sh ]; then LW=$(BUILD)/layerwise bash tests/e2e_test.sh; fi
	@LW=$(BUILD)/layerwise bash tests/e2e_signals.sh

# ---- fuzzing (clang + libFuzzer) -------------------------------------------
# One harness per loader, and one through the whole engine (tests/fuzz_*.c),
# built with ASan+UBSan into $(BUILD)/fuzz. `make check-fuzz` runs each for
# FUZZ_SECONDS, seeded from data/, tests/fixtures/ and tests/fuzz/corpus/;
# what it finds new stays in $(BUILD)/fuzz/corpus/NAME, a crash in
# $(BUILD)/fuzz/crash-*, the log in $(BUILD)/fuzz/NAME.log.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 30
FUZZ_FLAGS   := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_NAMES   := $(patsubst tests/fuzz_%.c,%,$(wildcard tests/fuzz_*.c))
FUZZ_SEEDS_net      := data/networks tests/fixtures/nets tests/fixtures/bad
FUZZ_SEEDS_search   := data/networks tests/fixtures/nets
FUZZ_SEEDS_cluster  := data/clusters tests/fixtures/clusters tests/fixtures/bad
FUZZ_SEEDS_strategy := tests/fixtures/strategies tests/fixtures/bad
FUZZ_SEEDS_profile  := data/profiles tests/fixtures/bad
FUZZ_SEEDS_onnx     := tests/fixtures/onnx
FUZZ_DICT_search    := tests/fuzz/net.dict
FUZZ_ENV := ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# $(call fuzz_run,NAME,SECONDS)
fuzz_run = mkdir -p $(BUILD)/fuzz/corpus/$(1) && echo "== fuzz_$(1) ($(2) s)" && \
  $(FUZZ_ENV) $(BUILD)/fuzz/fuzz_$(1) -max_total_time=$(2) -timeout=20 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/ \
    $(addprefix -dict=,$(firstword $(wildcard $(or $(FUZZ_DICT_$(1)),tests/fuzz/$(1).dict)))) \
    $(BUILD)/fuzz/corpus/$(1) $(wildcard tests/fuzz/corpus/$(1) $(FUZZ_SEEDS_$(1)) tests/fixtures/fuzz-regressions) \
    > $(BUILD)/fuzz/$(1).log 2>&1 \
  && grep -h -E '^Done|stat::number_of_executed_units|stat::peak_rss_mb' $(BUILD)/fuzz/$(1).log | tr '\n' ' ' && echo \
  || { tail -n 60 $(BUILD)/fuzz/$(1).log; exit 1; }

$(BUILD)/fuzz_%: tests/fuzz_%.c tests/fuzz_common.h $(ENGINE_OBJ)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -fsanitize=fuzzer -Itests -o $@ $< $(ENGINE_OBJ) $(LDLIBS)

fuzz-bins: $(FUZZ_NAMES:%=$(BUILD)/fuzz_%)

fuzz:
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz: needs $(FUZZ_CC) (apt-get install clang)" >&2; exit 1; }
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/fuzz CC=$(FUZZ_CC) CFLAGS="$(FUZZ_FLAGS)" fuzz-bins

check-fuzz: fuzz
	@set -e; $(foreach f,$(FUZZ_NAMES),$(call fuzz_run,$(f),$(FUZZ_SECONDS));)

# The same harnesses with a plain main() (tests/fuzz/replay_main.c) instead of
# libFuzzer: any compiler, each run once over its seeds and the regression
# inputs, so their properties hold on the shipped files and they keep
# building. `make test` runs them under ASan+UBSan (no clang needed).
$(BUILD)/fuzz-replay/fuzz_%: tests/fuzz_%.c tests/fuzz/replay_main.c tests/fuzz_common.h $(ENGINE_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -Itests -o $@ $< tests/fuzz/replay_main.c $(ENGINE_OBJ) $(LDLIBS)

fuzz-replay: $(FUZZ_NAMES:%=$(BUILD)/fuzz-replay/fuzz_%)
	@set -e; $(foreach f,$(FUZZ_NAMES),$(FUZZ_ENV) $(BUILD)/fuzz-replay/fuzz_$(f) \
	  $(wildcard tests/fuzz/corpus/$(f) $(FUZZ_SEEDS_$(f)) tests/fixtures/fuzz-regressions);)

# ---- valgrind --------------------------------------------------------------
# The CLI under memcheck for every shipped network (tests/valgrind.sh):
# no invalid access, no leak of ours (Graphviz's own: tests/valgrind.supp).
valgrind: $(BUILD)/layerwise
	@LW=$(BUILD)/layerwise OUT=$(BUILD)/valgrind bash tests/valgrind.sh

# ---- benchmark -------------------------------------------------------------
$(BUILD)/bench: tests/bench.c tests/many_layers.h $(ENGINE_OBJ)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -Itests -o $@ $< $(ENGINE_OBJ) $(LDLIBS)

bench: $(BUILD)/bench $(BUILD)/layerwise
	$(BUILD)/bench $(BUILD)/layerwise

# The tables of data/doc/reproduce.md ("Reproducing the paper"), from the real program.
reproduce: $(BUILD)/layerwise
	@LW=$(BUILD)/layerwise python3 tests/reproduce.py

# The GPU constants fitted to published single-GPU throughputs (prints each
# row's error; fails if the shipped files differ from the fit), and every
# published figure held in data/published/ beside the model's prediction.
calibrate: $(BUILD)/layerwise
	@LW=$(BUILD)/layerwise python3 tests/calibrate.py
validate: $(BUILD)/layerwise
	@LW=$(BUILD)/layerwise python3 tests/validate.py

# ---- diagrams for the README ----------------------------------------------
# Each view of `layerwise export` as PNG: VGG-16 and Inception-v3 on 16 GPUs
# of p100-4x4, the paper's setting. The reduced views stop partway through
# Algorithm 1 (the final graph is just data -> prob).
DIAGRAM_ARGS := -c p100-4x4 -g 16
diagrams: $(BUILD)/layerwise
	@mkdir -p screenshots
	@set -e; for n in vgg16 inception_v3; do \
	  for v in graph strategy; do \
	    $(BUILD)/layerwise export -n $$n $(DIAGRAM_ARGS) --view $$v -o screenshots/diagram-$$v-$$n.png; \
	  done; \
	done; \
	$(BUILD)/layerwise export -n vgg16 $(DIAGRAM_ARGS) --view reduced --step 14 -o screenshots/diagram-reduced-vgg16.png; \
	$(BUILD)/layerwise export -n inception_v3 $(DIAGRAM_ARGS) --view reduced --step 60 -o screenshots/diagram-reduced-inception_v3.png

# ---- screenshots of the TUI ---------------------------------------------------
# Each screen run in tmux, captured with its colours and drawn to
# screenshots/*.png by tests/render_screen.py; Debian's python3-pil and
# fonts-dejavu-core are installed first if missing (root, like `make deps`).
screenshots: $(BUILD)/layerwise
	@missing=""; command -v tmux >/dev/null || missing="$$missing tmux"; \
	/usr/bin/python3 -c 'import PIL' 2>/dev/null || missing="$$missing python3-pil"; \
	[ -f /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ] || missing="$$missing fonts-dejavu-core"; \
	if [ -n "$$missing" ]; then \
	  echo "make screenshots: installing$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "make screenshots: need root to apt-get install$$missing" >&2; exit 1; fi; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing) >/dev/null || exit 1; \
	fi
	@LW=$(BUILD)/layerwise PYTHON=/usr/bin/python3 bash tests/screenshots.sh screenshots

# The TUI's headless screen tests alone.
screen-tests: $(BUILD)/tests/test_tui
	$(BUILD)/tests/test_tui --jobs 2

clean:
	rm -rf $(BUILD)
