# fsim: the pipeline as make targets, through named files in $(WORK), so a
# failed or killed stage is resumed by running make again (every stage writes
# its output atomically: a file that exists is complete).
#
# This file is also the installed command's: the `fsim` driver embeds it,
# writes it to WORK/fsim.mk and runs `make -f WORK/fsim.mk report` outside
# any checkout (src/driver/), so the `report` targets use nothing but
# the binaries in BIN and POSIX tools (sh, mkdir, cat, awk, seq).
#
#   make demo                         sample repository, whole pipeline, report
#   make test                         all tests (what CI runs)
#   make install PREFIX=<dir>         the programs in PREFIX/bin (fsim FOLDER runs the pipeline)
#   make report REPO=<dir> WORK=<dir> WORK/report.txt and WORK/report.json
#     ... SHARDS=8                    chunk in 8 resumable shards (use make -j)
#     ... PREVIOUS=<old work dir>     re-chunk only files changed since then, analyse and verify only their pairs
#                                     (FORMATS="txt json tsv html xlsx sh" for more; sh: report.sh, actions for identical files)
#     ... REPO="a=/data/x b=/data/y"  named collections, chunked apart, merged
#     ... COLLECTIONS="s=<dir>..."    collections chunked elsewhere (files.tsv
#                                     and chunks.tsv in <dir>), merged in
#     ... REPO="p2=<dir>" AGAINST=<old work dir>  a new collection against an earlier
#                                     run's, whose files are not read again
#     ... TEMPLATES=<file>            ignore the chunks of these templates
#     ... SITE_NAMES=0                keep the chunks that web pages of 10 names or more share (a site's theme)
#   make template WORK=<dir> CLUSTER=<id>  mark a cluster of the last report as
#                                     template similarity (WORK/templates.tsv)
#   make check                        fmt + clippy + tests (tests/rules/layers.rs: the import layering)
#   make native                       binaries tuned for this CPU (target-cpu=native), in $(NATIVE_DIR)
#   make eval [DOCS=<folder>]         the HP paper's experiment: docs/evaluation.md
#   make spark-demo                   the same pipeline on Apache Spark, local mode
#   make spark-cluster-demo           the same on a standalone cluster (master + 2 workers) started here
#   make spark-report REPO=.. WORK=.. on Spark (SPARK_MASTER=local[4], yarn...)

# This makefile, for the sub-makes (`make -f` is not passed on to them).
MAKEFILE_SELF := $(lastword $(MAKEFILE_LIST))

REPO      ?=
WORK      ?= work
# The settings below that are empty by default are passed to the binaries
# only when set: unset, each binary's own default applies, and those are the
# recommended settings measured in docs/quality.md, so `make report` and
# the pipe of docs/usage.md give the same report (tests/driver/one_pipeline.rs).
# Average chunk size (fsim-chunk --avg-size; default 100, chosen by
# measurement, docs/quality.md, make quality); AVG=1000 is the paper's fast
# coarse pass (~10x fewer records, lower recall).
AVG       ?=
# Chunking method (fsim-chunk --method; default tttd).
METHOD    ?=
# Extra fsim-chunk options, e.g. for feature methods: METHOD_OPTS='-n 50 --fold-case'
METHOD_OPTS ?=
# Which bytes are compared (fsim-chunk --content; default auto: documents as
# their text, compressed files decompressed, docs/documents.md); CONTENT=raw
# compares every file's raw bytes, as fsim did before content views.
CONTENT   ?=
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
# Budget of fsim-sort, fsim-verify and each fsim-report process (the
# formats of `make report` run up to JOBS at a time, each with its own
# MEMORY; the binaries' default 256M). The analysis has CAPACITY.
MEMORY    ?=
# Bins and analysis (fsim-binpack and fsim-analyze --capacity; default 1G).
CAPACITY  ?=
# Analysis floor (percent of the smaller file): pairs below are not kept
# (fsim-analyze --min-percent; default 10, measured in docs/quality.md: 5
# finds slightly more pairs at T=30).
FLOOR     ?=
# Line source (fsim-analyze --line-pairs-below/--line-catalogs):
# text files of at most LINES bytes (any: every size), and translation
# catalogs (.po, .pot) when CATALOGS=1, are also compared line by line;
# pairs whose multiset line overlap reaches LINE_FLOOR % of the smaller file
# become candidates (edits every few lines, a formatter's run, leave no
# chunk in common). Reads the files, so only with VERIFY=1. LINES=0
# CATALOGS=0: chunks only; LINES=4K: small files only (faster, no
# reformatted module found). fsim-analyze's defaults: LINES=any CATALOGS=1
# LINE_FLOOR=30 (docs/quality.md, docs/performance.md). Like the chunks,
# the lines leave out a site's theme (SITE_NAMES) and marked TEMPLATES.
LINES     ?=
CATALOGS  ?=
LINE_FLOOR ?=
# Report threshold (percent of the smaller file), applied on what analysis
# kept; also fsim-verify's (below). Unset: fsim-report's default, which
# make asks it (`fsim-report --print-settings`) because it keeps the
# threshold verify used in a file and compares it with the next one.
MIN_PERCENT ?=
# Report: links with fewer bytes in common are left out (default 0).
MIN_BYTES ?=
# VERIFY=0 skips fsim-verify (exact bytes in common, read from the files):
# for runs where the files are not reachable (metadata from another site).
VERIFY    ?= 1
# SORT=gnu uses `LC_ALL=C sort` instead of fsim-sort (same bytes out).
SORT      ?= fsim
# Reports written by `make report`: any of txt json tsv html xlsx.
FORMATS   ?= txt json
# HTML: side-by-side views for at most this many links (fsim-report
# --html-max-views; passed only when set).
HTML_MAX_VIEWS ?=
# REGIONS=1 also writes WORK/regions.tsv: the shared regions (offsets) of
# every verified pair, for scripts (scripts/check-runs.py) and review
# tools. Off by default: the report does not read it (the html computes
# the views it shows), and on catalogs of many locales it is many times
# the repository (2.67 GB for a 167 MB tree).
REGIONS ?= 0
QUIET     ?= -q
# Templates files (fsim-template) whose chunks every analysis ignores:
# sizes become payloads. Several files: space-separated.
TEMPLATES ?=
TEMPLATE_OPTS = $(foreach t,$(TEMPLATES),--templates $(t))
# A generated site's template (fsim-partition and fsim-analyze
# --site-names; docs/usage.md, "Generated sites"): a chunk, or a line, in
# web pages of at least this many names links no pair. Unset: their
# default (10); 0 turns it off.
SITE_NAMES ?=
# make template: which cluster, and the fraction of its files a chunk must be in.
CLUSTER   ?=
FRACTION  ?= 1
# Collections chunked elsewhere: NAME=DIR with DIR holding files.tsv and
# chunks.tsv (only metadata travels). REPO may also name its roots:
# REPO="manuals=/data/a notes=/data/b".
COLLECTIONS ?=
# AGAINST=<earlier work dir>: REPO's named roots compared with an earlier
# run's collections (each keeps its name; NAME=<dir> names a run that had
# none) from that run's file table and chunks, its files never read again
# to chunk; PREVIOUS is that run, so only the pairs with a new file are
# analysed and verified, the others keep its figures (docs/usage.md,
# "A new collection against a case").
AGAINST ?=
ifneq ($(words $(AGAINST)),$(filter 0 1,$(words $(AGAINST))))
$(error AGAINST takes one earlier work folder ($(AGAINST)); name more in COLLECTIONS)
endif
AGAINST_DIR = $(lastword $(subst =, ,$(AGAINST)))
NAMED_ROOTS := $(strip $(foreach w,$(REPO),$(if $(findstring =,$(w)),$(w))))
PLAIN_ROOTS := $(strip $(foreach w,$(REPO),$(if $(findstring =,$(w)),,$(w))))
COLL_NAMES  := $(foreach w,$(NAMED_ROOTS),$(firstword $(subst =, ,$(w))))

CARGO ?= cargo
# Portable binaries by default (MD5 lanes are chosen at run time).
# NATIVE=1 tunes for this CPU (a binary that may not run on another machine);
# `make native` builds such binaries in their own target folder.
NATIVE ?=
NATIVE_FLAGS = -C target-cpu=native
ifeq ($(NATIVE),1)
export RUSTFLAGS += $(NATIVE_FLAGS)
endif
NATIVE_DIR ?= target/native
# Where the binaries are: cargo's release folder (CARGO_TARGET_DIR's when
# set), built by `make build`; the tests point this at their own build.
RELEASE_DIR := $(or $(CARGO_TARGET_DIR),target)/release
BIN   ?= $(RELEASE_DIR)

.PHONY: FORCE all build native install uninstall layers demo report report-files settings test test-fast check lint bench bench-outofcore bench-tenmillion bench-changes quality quality-documents quality-venv eval clean clean-work check-repo chunk-shards template spark-venv spark-report spark-demo spark-cluster-demo
.DELETE_ON_ERROR:

all: build

# NO_BUILD=1: the sub-make of `make report`, whose make built them already.
build:
ifeq ($(BIN)$(NO_BUILD),$(RELEASE_DIR))
	$(CARGO) build --release --quiet --bins
endif

# Tuned for this CPU, in their own target folder (the portable build is
# untouched): `make report BIN=$(NATIVE_DIR)/release ...` runs them.
native:
	RUSTFLAGS="$(NATIVE_FLAGS)" CARGO_TARGET_DIR=$(NATIVE_DIR) $(CARGO) build --release --quiet --bins

# make install PREFIX=<dir>: the user's programs (fsim and its stages,
# src/bin; not the developer tools of tools/: fsim-gen, fsim-eval) into PREFIX/bin,
# from BIN (built first, with cargo's progress, when it is cargo's release
# folder, the default; the tests install their own build), their man pages
# (share/man/man1) and bash completions (share/bash-completion/completions),
# generated by tools' fsim-docs from each program's --help and the settings
# table, and the user docs into PREFIX/share/doc/fsim (not the measurement
# logs, which stay in the source tree). `fsim FOLDER` needs nothing else: it carries this
# makefile, finds the stages beside itself and runs `make report`.
PREFIX   ?= /usr/local
DESTDIR  ?=
PROGRAMS  = $(sort $(basename $(notdir $(wildcard src/bin/*.rs))))
DOC_DIR   = $(DESTDIR)$(PREFIX)/share/doc/fsim
MAN_DIR   = $(DESTDIR)$(PREFIX)/share/man/man1
COMPLETIONS_DIR = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
install:
	@test -n "$(PROGRAMS)" || { echo "make: install runs in the fsim checkout (src/bin)" >&2; exit 2; }
ifeq ($(BIN),$(RELEASE_DIR))
	$(CARGO) build --release $(addprefix --bin ,$(PROGRAMS) fsim-docs)
endif
	install -d $(DESTDIR)$(PREFIX)/bin $(DOC_DIR)/docs/images
	install -m 755 $(addprefix $(BIN)/,$(PROGRAMS)) $(DESTDIR)$(PREFIX)/bin/
	$(BIN)/fsim-docs --bin $(BIN) --man $(MAN_DIR) --completions $(COMPLETIONS_DIR) $(PROGRAMS)
	install -m 644 README.md CHANGELOG.md $(DOC_DIR)/
	install -m 644 $(wildcard docs/*.md) $(DOC_DIR)/docs/
	install -m 644 $(wildcard docs/images/*) $(DOC_DIR)/docs/images/

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/bin/,$(PROGRAMS))
	rm -f $(foreach p,$(PROGRAMS),$(MAN_DIR)/$(p).1 $(COMPLETIONS_DIR)/$(p))
	rm -rf $(DOC_DIR)

MEMORY_OPT   = $(if $(MEMORY),--memory $(MEMORY))
CAPACITY_OPT = $(if $(CAPACITY),--capacity $(CAPACITY))

# Every stage after the chunking runs through fsim-reuse, which leaves the
# stage's key (program, arguments, inputs' bytes) in WORK/reuse/: with
# PREVIOUS=<old work dir>, a stage whose key is the earlier run's is not
# run, its output is that run's file: a hard link dated now (a copy across
# file systems; docs/reliability.md). Timestamps
# in the file table count only for the actions script (FORMATS=sh).
REUSE_TO = $(BIN)/fsim-reuse $(QUIET) $(if $(PREVIOUS),--previous $(PREVIOUS)) -o
REUSE = $(REUSE_TO) $@

# Scratch space: COMPRESS=1 (the default) writes the chunk records, the
# sorted records, the partition, the bins, the pairs and the verified pairs
# zstd-compressed (level 1): each is then 0.1-0.4x its text, and
# `zstdcat WORK/verified.tsv` gives its
# lines; every stage reads zstd, gzip or text. On a quiet machine it costs
# no measurable time (a zstd thread beside each stage); COMPRESS=0 keeps
# text (docs/performance.md, "Scratch space").
COMPRESS ?= 1
COMPRESS_OPT = $(if $(filter 1,$(COMPRESS)),--compress)

# LINE_SETS: the line source keeps each content's lines in
# $(WORK)/lines.tsv, and a PREVIOUS= re-run takes the unchanged contents'
# lines from the earlier one instead of reading their files (the same
# pairs; an edited re-run 47 % -> 33 % of a run from scratch on 100,000
# prose files). The file is 0.10-0.20x the tree; a re-run holds it beside
# both runs' chunk records, so auto (the default) keeps it only when it,
# with twice the chunk records, takes at most 4/5 of the tree (on
# /usr/share/doc, whose gzip manuals make records of 0.46x the tree, it
# does not): the re-run stays within the scratch budget (docs/performance.md,
# "Re-runs and scratch space"). 1 keeps it always, 0 never. It changes no
# output, so it is in no stage's settings.
LINE_SETS ?= auto
LINE_SETS_OPTS = $(if $(filter 1 auto,$(LINE_SETS)),--lines-out $(WORK)/lines.tsv $(if $(filter auto,$(LINE_SETS)),--lines-room-beside $(WORK)/chunks.tsv) $(if $(wildcard $(PREVIOUS)/lines.tsv),--previous-lines $(PREVIOUS)/lines.tsv))

ifeq ($(SORT),gnu)
SORT_CMD = zstd -dcfq $< | LC_ALL=C sort $(if $(MEMORY),-S $(MEMORY)) -T $(WORK) -o $@.part && mv $@.part $@
else
# Finished runs are kept in $@.runs with a journal: a killed sort resumed
# by make continues after its last finished run (docs/reliability.md).
SORT_CMD = $(REUSE) -- $(BIN)/fsim-sort $(QUIET) $(MEMORY_OPT) $(COMPRESS_OPT) $(CHANGED_SORT_OPT) --resume-dir $@.runs -o $@ $<
endif

# A re-run (PREVIOUS=) sorts, partitions and packs only the records of the
# chunks the changed files hold now or held then ($(WORK)/changed.tsv,
# written by fsim-chunk with the records, removed by every recipe that
# writes them otherwise; every file's records of those chunks): the pairs
# with a changed file are the same as from every record, and the others
# are the earlier run's (docs/pipeline.md, "Re-runs"). fsim-partition
# patches what it dropped from the earlier run's $(PREVIOUS)/dropped.tsv.
# When that cannot stand for every record (another file list or limit,
# templates, a chunk dropped then and not now, an analysis that must see
# every pair), the stage exits with 3 and the recipe makes its target
# again from every record (CHANGED_ONLY=0, which also turns it off).
CHANGED_ONLY ?= 1
changed_only = $(and $(PREVIOUS),$(filter-out 0,$(CHANGED_ONLY)),$(if $(TEMPLATES),,y))
CHANGED_SORT_OPT = $(if $(and $(changed_only),$(wildcard $(WORK)/changed.tsv),$(wildcard $(PREVIOUS)/dropped.tsv)),--changed $(WORK)/changed.tsv)
CHANGED_PARTITION_OPTS = --dropped-out $(WORK)/dropped.tsv $(if $(changed_only),$(if $(wildcard $(PREVIOUS)/dropped.tsv),--previous-dropped $(PREVIOUS)/dropped.tsv) $(if $(wildcard $(WORK)/changed.tsv),--changed $(WORK)/changed.tsv))
# $(call or_all,TARGET): after a stage that exited with 3, the changed
# chunks' sorted records, partition and bins removed and TARGET made again
# from every record by a make of its own (which cannot exit with 3 again).
or_all = $(if $(filter 0,$(CHANGED_ONLY)),,|| { rc=$$?; [ $$rc -eq 3 ] || exit $$rc; rm -f $(WORK)/sorted.tsv $(WORK)/partition.tsv $(WORK)/bins.tsv; echo "make: $(notdir $(1)) again from every record" >&2; $(MAKE) -f $(MAKEFILE_SELF) --no-print-directory NO_BUILD=1 CHANGED_ONLY=0 $(1); })

# The work folder carries a cache directory tag (bford.info/cachedir): a
# scan of a folder that holds it leaves it out, and backup tools may too.
# The same text as the installed fsim's (CACHEDIR_TAG in src/driver/).
$(WORK):
	mkdir -p $@
	printf '%s\n' 'Signature: 8a477f597d28d172789f06886806bc55' '# This file is a cache directory tag created by fsim: the work folder of an fsim run, never scanned by fsim.' '# For information about cache directory tags, see https://bford.info/cachedir/' > $@/CACHEDIR.TAG

# Step 1: chunk every file (writes files.tsv first, then chunks.tsv).
# PREVIOUS=<old work dir>: reuse the records of unchanged files (same path,
# size, mtime) from that run's files.tsv and chunks.tsv, reading only the
# others. SHARDS=N: chunk in N shards, one target each (make -j runs them
# in parallel; a killed shard loses only its own work), then merge them
# (a walk + stat, nothing read) into the same bytes as an unsharded run.
SHARDS    ?= 1
PREVIOUS  ?=
ifneq ($(strip $(AGAINST)),)
PREVIOUS  = $(AGAINST_DIR)
endif
CHUNK_OPTS = $(QUIET) $(COMPRESS_OPT) $(if $(METHOD),--method $(METHOD)) $(if $(AVG),--avg-size $(AVG)) $(if $(CONTENT),--content $(CONTENT)) $(METHOD_OPTS)
# DROP_PREVIOUS=1 (the fsim command's re-run: its WORK/previous is its
# own, removed when the run ends): the earlier run's bins go before the
# chunking (a re-run whose records changed cannot take them; one whose
# files were only touched packs its bins again, a small part of the run),
# and once this run's chunk records are written the earlier ones go, so
# the two runs' records and the earlier bins are never on disk together
# (docs/performance.md, "Re-runs and scratch space"). Not the earlier
# records when this run's are that file itself (the same inode: nothing
# to free). A redo that must chunk again after that reads every file.
# Only in a folder fsim made (its cache directory tag says so): a folder
# of the user's given by mistake loses nothing.
DROP_PREVIOUS ?=
fsim_made = grep -qs 'created by fsim' $(1)/CACHEDIR.TAG
dropping = $(and $(filter 1,$(DROP_PREVIOUS)),$(PREVIOUS))
drop_bins = $(if $(dropping),{ ! $(call fsim_made,$(PREVIOUS)) || rm -f $(PREVIOUS)/bins.tsv $(PREVIOUS)/plan.tsv || :; } &&)
drop_previous = $(if $(dropping),&& { [ $(PREVIOUS)/chunks.tsv -ef $@ ] || ! $(call fsim_made,$(PREVIOUS)) || rm -f $(PREVIOUS)/chunks.tsv || :; })
# The earlier line sets, once the analysis took what it needed (kept when
# they are this run's own file: a re-run in which nothing changed links them).
drop_lines = $(if $(dropping),&& { [ $(PREVIOUS)/lines.tsv -ef $(WORK)/lines.tsv ] || ! $(call fsim_made,$(PREVIOUS)) || rm -f $(PREVIOUS)/lines.tsv || :; })
# With DROP_PREVIOUS=1, fsim-chunk frees the earlier chunk records as it
# reads them (--consume-previous: not while its output may turn out to be
# them, nor a file with another name), so both runs' records are never
# whole on disk together; only in a folder fsim made.
consume_chunks = $(if $(dropping),$$($(call fsim_made,$(PREVIOUS)) && echo --consume-previous))
PREV_CHUNKS = $(if $(and $(filter 1,$(DROP_PREVIOUS)),$(if $(wildcard $(PREVIOUS)/chunks.tsv),,gone)),,$(PREVIOUS))
PREV_OPTS  = $(if $(PREV_CHUNKS),--previous $(PREV_CHUNKS)/files.tsv --previous-chunks $(PREV_CHUNKS)/chunks.tsv)
SHARD_DIR  = $(WORK)/shards-$(SHARDS)
SHARD_IDS := $(shell seq 0 $$(( $(SHARDS) - 1 )) 2>/dev/null)
SHARD_CHUNKS = $(foreach i,$(SHARD_IDS),$(SHARD_DIR)/chunks.$(i).tsv)

# Settings are checked before any work: a value no stage would take stops
# make at once with one line (`make report FORMATS=pdf`), not after the
# scan. The installed fsim checks these and the sizes and percentages
# (src/driver/) before it creates the work folder.
FORMATS_KNOWN = txt json tsv html xlsx sh
strip_digits = $(subst 0,,$(subst 1,,$(subst 2,,$(subst 3,,$(subst 4,,$(subst 5,,$(subst 6,,$(subst 7,,$(subst 8,,$(subst 9,,$(1)))))))))))
# A whole number of 1 or more: one word, digits only, not all zeros.
is_count = $(and $(filter 1,$(words $(1))),$(if $(call strip_digits,$(1)),,y),$(subst 0,,$(1)))
# $(call expect,NAME,what): stop with NAME=value and what is expected.
expect = $(error $(1)=$($(1)): expected $(2))
ifneq ($(filter report report-files chunk-shards settings spark-report $(WORK)/%,$(MAKECMDGOALS)),)
ifneq ($(filter-out $(FORMATS_KNOWN),$(FORMATS)),)
$(call expect,FORMATS,any of $(FORMATS_KNOWN))
endif
$(if $(filter 0 1,$(VERIFY)),,$(call expect,VERIFY,0 or 1))
$(if $(filter 0 1,$(REGIONS)),,$(call expect,REGIONS,0 or 1))
$(if $(filter-out 0 1,$(CATALOGS)),$(call expect,CATALOGS,0 or 1))
$(if $(filter fsim gnu,$(SORT)),,$(call expect,SORT,fsim or gnu))
$(if $(filter 0 1,$(COMPRESS)),,$(call expect,COMPRESS,0 or 1))
$(if $(filter 0 1 auto,$(LINE_SETS)),,$(call expect,LINE_SETS,0, 1 or auto))
$(if $(filter 0 1,$(CHANGED_ONLY)),,$(call expect,CHANGED_ONLY,0 or 1))
$(if $(call is_count,$(SHARDS)),,$(call expect,SHARDS,a whole number of shards (1 or more)))
$(if $(call is_count,$(JOBS)),,$(call expect,JOBS,a whole number of processes (1 or more)))
endif

check-repo:
	@$(if $(strip $(REPO)$(COLLECTIONS)$(AGAINST)),:,echo "make: set REPO=<folder to analyse>" >&2; exit 2)

ifneq ($(strip $(NAMED_ROOTS)$(COLLECTIONS)$(AGAINST)),)
# Collections: each named root is chunked on its own, then fsim-merge joins
# them (and the COLLECTIONS chunked elsewhere) with ids that never collide.
ifneq ($(PLAIN_ROOTS),)
$(error REPO mixes named roots and plain ones ($(PLAIN_ROOTS)): name every root, NAME=DIR)
endif
COLL_CHUNKS = $(foreach n,$(COLL_NAMES),$(WORK)/collections/$(n)/chunks.tsv)

$(WORK)/collections/%/chunks.tsv: $(WORK)/settings/chunk | build check-repo $(WORK)
	mkdir -p $(@D)
	$(BIN)/fsim-chunk $(CHUNK_OPTS) -j $(JOBS) --files-out $(@D)/files.tsv -o $@ $(patsubst $*=%,%,$(filter $*=%,$(REPO)))

$(WORK)/chunks.tsv: $(COLL_CHUNKS) $(WORK)/settings/chunk | build $(WORK)
	rm -f $(WORK)/changed.tsv && $(BIN)/fsim-merge $(QUIET) $(if $(and $(AGAINST),$(changed_only)),--changed-out $(WORK)/changed.tsv) --files-out $(WORK)/files.tsv -o $@ $(foreach n,$(COLL_NAMES),$(n)=$(WORK)/collections/$(n)) $(COLLECTIONS) $(AGAINST)
else ifeq ($(SHARDS),1)
$(WORK)/chunks.tsv: $(WORK)/settings/chunk | build $(WORK) check-repo
	$(drop_bins) rm -f $(WORK)/changed.tsv && $(BIN)/fsim-chunk $(CHUNK_OPTS) -j $(JOBS) $(PREV_OPTS) $(if $(PREV_OPTS),--changed-out $(WORK)/changed.tsv $(consume_chunks)) --files-out $(WORK)/files.tsv -o $@ $(REPO) $(drop_previous)
else
$(SHARD_DIR): | $(WORK)
	mkdir -p $@

# One shard: its file table is renamed into place before its chunk file.
$(SHARD_DIR)/chunks.%.tsv: $(WORK)/settings/chunk | build $(SHARD_DIR) check-repo
	$(drop_bins) $(BIN)/fsim-chunk $(CHUNK_OPTS) -j 1 --shard $*/$(SHARDS) $(PREV_OPTS) --files-out $(SHARD_DIR)/files.$*.tsv -o $@ $(REPO)

chunk-shards: $(SHARD_CHUNKS)

$(WORK)/chunks.tsv: $(SHARD_CHUNKS) $(WORK)/settings/chunk | build $(WORK)
	rm -f $(WORK)/changed.tsv && $(BIN)/fsim-chunk $(CHUNK_OPTS) -j $(JOBS) $(foreach i,$(SHARD_IDS),--previous $(SHARD_DIR)/files.$(i).tsv --previous-chunks $(SHARD_DIR)/chunks.$(i).tsv) --files-out $(WORK)/files.tsv -o $@ $(REPO) $(drop_previous)
endif

$(WORK)/files.tsv: $(WORK)/chunks.tsv
	@test -f $@ || { echo "make: $@ is missing: remove $< and run make again" >&2; exit 2; }

# fsim-chunk writes files.tsv atomically inside the recipe of chunks.tsv,
# so make, stopped by a signal while the check above runs, would take it
# for a half-made target (its time changed since make looked) and delete
# it, and the re-run could not resume. It is never half-made: keep it.
.PRECIOUS: $(WORK)/files.tsv

# Scratch space: the sorted records and the partition are each removed as
# soon as the stage after them has written its output (each is ~0.4-0.5x
# the repository). make knows them as intermediates (.SECONDARY): a missing
# one is made again only when a stage that reads it must run again
# (another SITE_NAMES or CAPACITY, `make template`), and a resumed run
# does not remake what is done. The bins stay: the analysis settings
# (FLOOR, LINES, VERIFY...), the ones most often changed, re-run from them.
# KEEP=1 keeps all (scripts, debugging, comparing runs).
KEEP ?=
INTERMEDIATES = $(WORK)/sorted.tsv $(WORK)/partition.tsv
.SECONDARY: $(INTERMEDIATES)
# After a recipe that consumed FILE, unless KEEP=1: FILE removed once the
# recipe succeeded; a removal that fails leaves it, never fails the stage.
consumed = $(if $(filter 1,$(KEEP)),,&& { rm -f $(1) || :; })

# 2.5 step 2: sort the chunk records by hash on disk.
$(WORK)/sorted.tsv: $(WORK)/chunks.tsv | build
	$(SORT_CMD)

# 2.5 steps 3-4: union-find, drop singletons and ubiquitous chunks.
# TEMPLATES: template chunks dropped, F sizes become payloads (a newer
# templates file re-runs from here; nothing is re-chunked).
$(WORK)/partition.tsv: $(WORK)/sorted.tsv $(WORK)/files.tsv $(TEMPLATES) $(WORK)/settings/partition | build
	{ $(REUSE) --also $(WORK)/dropped.tsv --mtimes-unused -- $(BIN)/fsim-partition $(QUIET) $(COMPRESS_OPT) --files $(WORK)/files.tsv $(if $(SITE_NAMES),--site-names $(SITE_NAMES)) $(TEMPLATE_OPTS) $(CHANGED_PARTITION_OPTS) -o $@ $< $(call or_all,$@); } $(call consumed,$<)

# 2.5 steps 5-6: pack components into bins that fit in memory.
$(WORK)/bins.tsv: $(WORK)/partition.tsv $(WORK)/settings/binpack | build
	$(REUSE) --also $(WORK)/plan.tsv -- $(BIN)/fsim-binpack $(QUIET) $(COMPRESS_OPT) $(CAPACITY_OPT) --tmpdir $(WORK) --plan $(WORK)/plan.tsv -o $@ $< $(call consumed,$<)

# Steps 3-4 and 2.4: similar pairs per bin (and the line source's).
ifeq ($(VERIFY),0)
LINE_OPTS = --no-line-source
else
# The line source writes no pair whose line overlap (an upper bound of
# fsim-verify's figure) is under the threshold fsim-verify keeps pairs from.
# It leaves out the lines of a site's theme and of the templates, as the
# chunks did (fsim-partition's SITE_NAMES and TEMPLATES).
# With LINE_SETS (above) it keeps each content's lines and takes the
# earlier run's (docs/pipeline.md, "The line source").
LINE_OPTS = $(if $(LINES),--line-pairs-below $(LINES)) $(if $(CATALOGS),$(if $(filter 1,$(CATALOGS)),--line-catalogs,--no-line-catalogs)) $(if $(LINE_FLOOR),--line-min-percent $(LINE_FLOOR)) $(if $(SITE_NAMES),--site-names $(SITE_NAMES)) $(TEMPLATE_OPTS) --verify-min-percent $$(cat $(WORK)/verify-threshold) $(LINE_SETS_OPTS)
endif
# PREVIOUS=<old work dir> with a verified.tsv: only the pairs with a file
# changed since are written (delta=1), and fsim-verify takes the others
# from that run's verified.tsv; the outputs are the same bytes as a run
# from scratch. fsim-analyze says why when it must analyse every pair
# (other parameters, other chunks dropped, a lower MIN_PERCENT).
ANALYZE_PREV_OPTS = $(if $(and $(filter-out 0,$(VERIFY)),$(wildcard $(PREVIOUS)/verified.tsv)),--previous-files $(PREVIOUS)/files.tsv --previous-verified $(PREVIOUS)/verified.tsv)
$(WORK)/pairs.tsv: $(WORK)/bins.tsv $(WORK)/files.tsv $(TEMPLATES) $(if $(filter-out 0,$(VERIFY)),$(WORK)/verify-threshold) $(WORK)/settings/analyze | build
	{ $(BIN)/fsim-analyze $(QUIET) --files $(WORK)/files.tsv $(if $(FLOOR),--min-percent $(FLOOR)) $(LINE_OPTS) $(ANALYZE_PREV_OPTS) $(CAPACITY_OPT) $(COMPRESS_OPT) --tmpdir $(WORK) -j $(JOBS) -o $@ $< $(call or_all,$@); } $(drop_lines)

# Exact similarity of the candidate pairs (line LCS for text), and with
# REGIONS=1 their shared regions. PREVIOUS=<old work dir> with a
# verified.tsv: pairs whose two files are unchanged (path, size, content
# hash) keep that run's figures (and regions), only the others are read.
REGION_OPTS = $(if $(filter 1,$(REGIONS)),--regions $(WORK)/regions.tsv)
VERIFY_PREV_OPTS = $(if $(wildcard $(PREVIOUS)/verified.tsv),--previous $(PREVIOUS)/verified.tsv --previous-files $(PREVIOUS)/files.tsv $(if $(and $(REGION_OPTS),$(wildcard $(PREVIOUS)/regions.tsv)),--previous-regions $(PREVIOUS)/regions.tsv))
#
# fsim-verify drops the pairs that cannot reach the report's MIN_PERCENT
# (sizes, then an upper bound, before any diff): the report never shows
# them, and they cost most of the verification. The threshold it used is
# kept in $(WORK)/verify-threshold; lowering MIN_PERCENT rewrites it, so
# the next make verifies again, while raising it only re-filters the
# reports (verified.tsv already holds every pair above the new one).
$(WORK)/verify-threshold: FORCE | build $(WORK)
	@mkdir -p $(WORK)
	@new='$(MIN_PERCENT)'; \
	if [ -z "$$new" ]; then new=$$($(BIN)/fsim-report --print-settings | awk -F '\t' '{ for (i = 1; i <= NF; i++) if (sub(/^min-percent=/, "", $$i)) print $$i }'); fi; \
	test -n "$$new" || { echo "make: no threshold from $(BIN)/fsim-report --print-settings" >&2; exit 2; }; \
	old=$$(cat $@ 2>/dev/null); \
	if [ -z "$$old" ] || awk -v n="$$new" -v o="$$old" 'BEGIN { exit !(n + 0 < o + 0) }'; then \
	    echo "$$new" > $@; fi

$(WORK)/verified.tsv: $(WORK)/pairs.tsv $(WORK)/files.tsv $(WORK)/verify-threshold $(WORK)/settings/verify | build
	$(BIN)/fsim-verify $(QUIET) $(MEMORY_OPT) --files $(WORK)/files.tsv --min-percent $$(cat $(WORK)/verify-threshold) $(TEMPLATE_OPTS) $(VERIFY_PREV_OPTS) $(REGION_OPTS) $(COMPRESS_OPT) -j $(JOBS) -o $@ $<

FORCE:

# Each stage's settings, one file per stage in $(WORK)/settings, rewritten
# only when they differ from the last run's (as $(WORK)/verify-threshold
# is): a stage depends on its file, so a re-run with other settings runs
# that stage again and, through the files, every stage after it (with
# PREVIOUS=, fsim-reuse copies those whose inputs came out the same
# bytes; without, they run). A file names only the settings
# that change its stage's output: MEMORY, JOBS, SORT, SHARDS and PREVIOUS
# give the same bytes, and MIN_PERCENT reaches fsim-verify through
# $(WORK)/verify-threshold (only a lower one verifies again). Only the
# settings that are set are written (and an empty one read from an earlier
# file is ignored), so a fsim that adds a setting, empty by default, keeps
# the work folders of the fsim before it.
SETTINGS_chunk     = REPO COLLECTIONS AGAINST METHOD AVG CONTENT METHOD_OPTS
SETTINGS_partition = SITE_NAMES TEMPLATES
SETTINGS_binpack   = CAPACITY
SETTINGS_analyze   = VERIFY FLOOR LINES CATALOGS LINE_FLOOR SITE_NAMES TEMPLATES
SETTINGS_verify    = REGIONS TEMPLATES
SETTINGS_report    = MIN_PERCENT MIN_BYTES TEMPLATES REPORT_FILTERS
SETTINGS_html      = HTML_MAX_VIEWS
SETTINGS_sh        = KEEP_RULES
STAGE_SETTINGS = $(addprefix $(WORK)/settings/,chunk partition binpack analyze verify report html sh)
# A value as one word in single quotes for the shell.
shell_quote = '$(subst ','\'',$(1))'

# The chunk stage's file also holds the parameters fsim-chunk writes in its
# headers (`fsim-chunk --print-params`: its version of the views, the PDF
# extractor found), so an upgraded fsim or a newly installed pdftotext
# chunks again rather than mixing its records with the earlier ones.
$(WORK)/settings/%: FORCE | build $(WORK)
	@mkdir -p $(@D)
	@new=$$(printf '%s\n' $(foreach v,$(SETTINGS_$*),$(if $($(v)),$(call shell_quote,$(v)=$($(v)))))); \
	$(if $(filter chunk,$*),params=$$($(BIN)/fsim-chunk --print-params $(CHUNK_OPTS)) || exit 1; \
	new=$$(printf '%s\nparams=%s' "$$new" "$$params");) \
	old=$$(test -e $@ && while IFS= read -r l; do case "$$l" in (*=) case "$${l%=}" in (''|*[!A-Z_]*) printf '%s\n' "$$l";; esac;; (*) printf '%s\n' "$$l";; esac; done < $@); \
	if [ ! -e $@ ] || [ "$$new" != "$$old" ]; then printf '%s\n' "$$new" > $@; fi

# The settings files alone (the installed fsim compares them with those of
# an earlier run before it reuses that run's files).
settings: $(STAGE_SETTINGS)
	@:

ifeq ($(VERIFY),0)
PAIRS := $(WORK)/pairs.tsv
else
PAIRS := $(WORK)/verified.tsv
endif

# The formats are written once the pairs are verified, by a sub-make, JOBS
# processes at a time (xlsx, the slowest, first; the others in FORMATS
# order), each with its own --memory $(MEMORY); within a make -j, the
# sub-make shares its job slots instead. txt, json and tsv are one
# process (fsim-report --also): one read of the pairs, one model, one sort
# of the links for all of them, the bytes of a process each.
STREAMED = $(filter txt json tsv,$(FORMATS))
STREAMED_FILES = $(addprefix $(WORK)/report.,$(STREAMED))
REPORT_FILES = $(addprefix $(WORK)/report.,$(filter xlsx,$(FORMATS)) $(filter-out xlsx txt json tsv,$(FORMATS))) $(STREAMED_FILES)
report: $(PAIRS) $(WORK)/files.tsv | build
	@$(MAKE) -f $(MAKEFILE_SELF) --no-print-directory $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(JOBS)) NO_BUILD=1 report-files

report-files: $(REPORT_FILES)
	@:

# More fsim-report options, e.g. REPORT_FILTERS="--same-type --max-size-ratio 3
# --cross-collections-only" (sif's post-processing; other ones re-run the
# reports only, through $(WORK)/settings/report).
REPORT_FILTERS ?=
# TEMPLATE_OPTS: checked against the pairs; the html views mark template chunks.
REPORT_OPTS = $(QUIET) $(MEMORY_OPT) --files $(WORK)/files.tsv $(if $(MIN_PERCENT),--min-percent $(MIN_PERCENT)) $(if $(MIN_BYTES),--min-bytes $(MIN_BYTES)) $(TEMPLATE_OPTS) $(REPORT_FILTERS)

# Step 5 and 2.4: clusters and identical sets. The first of FORMATS' txt,
# json and tsv is fsim-report's -o, the others its --also (and
# fsim-reuse's); one of them not in FORMATS has a rule of its own.
REPORT_FORMAT_txt = text
REPORT_FORMAT_json = json
REPORT_FORMAT_tsv = tsv
ifneq ($(STREAMED),)
$(STREAMED_FILES) &: $(PAIRS) $(WORK)/files.tsv $(WORK)/settings/report | build
	$(REUSE_TO) $(firstword $(STREAMED_FILES)) $(foreach f,$(wordlist 2,3,$(STREAMED_FILES)),--also $(f)) --mtimes-unused -- $(BIN)/fsim-report $(REPORT_OPTS) --format $(REPORT_FORMAT_$(firstword $(STREAMED))) -o $(firstword $(STREAMED_FILES)) $(foreach f,$(wordlist 2,3,$(STREAMED)),--also $(REPORT_FORMAT_$(f))=$(WORK)/report.$(f)) $<
endif
define report_alone
$$(WORK)/report.$(1): $$(PAIRS) $$(WORK)/files.tsv $$(WORK)/settings/report | build
	$$(REUSE) --mtimes-unused -- $$(BIN)/fsim-report $$(REPORT_OPTS) --format $$(REPORT_FORMAT_$(1)) -o $$@ $$<
endef
$(foreach f,$(filter-out $(STREAMED),txt json tsv),$(eval $(call report_alone,$(f))))

# One self-contained page; re-reads the files of the viewed links.
$(WORK)/report.html: $(PAIRS) $(WORK)/files.tsv $(WORK)/settings/report $(WORK)/settings/html | build
	$(REUSE) --mtimes-unused -- $(BIN)/fsim-report $(REPORT_OPTS) --format html $(if $(HTML_MAX_VIEWS),--html-max-views $(HTML_MAX_VIEWS)) -o $@ $<

# Workbook with outlined clusters (paper figures 5 and 6).
$(WORK)/report.xlsx: $(PAIRS) $(WORK)/files.tsv $(WORK)/settings/report | build
	$(REUSE) --mtimes-unused -- $(BIN)/fsim-report $(REPORT_OPTS) --format xlsx -o $@ $<

# Actions for the identical files: a script to review, never run by fsim
# (FORMATS="txt json sh"; `sh report.sh` says what it would do).
# KEEP_RULES: which copy of each set it keeps (fsim-report --keep, e.g.
# KEEP_RULES=under:photos,oldest; passed only when set).
KEEP_RULES ?=
$(WORK)/report.sh: $(PAIRS) $(WORK)/files.tsv $(WORK)/settings/report $(WORK)/settings/sh | build
	$(REUSE) -- $(BIN)/fsim-report $(REPORT_OPTS) $(if $(KEEP_RULES),--keep $(call shell_quote,$(KEEP_RULES))) --format sh -o $@ $<

# Paper section 4: mark cluster CLUSTER of the last report as template
# similarity; its shared chunks are appended to the templates file (the
# first of TEMPLATES, else WORK/templates.tsv). Then run make report again
# with TEMPLATES=<that file>: from fsim-partition on, nothing re-chunked.
TEMPLATES_OUT = $(or $(firstword $(TEMPLATES)),$(WORK)/templates.tsv)
# The partition, removed after the bin packing unless KEEP=1, is made again
# first when it is gone.
# A template is made from every record's partition.
template: CHANGED_ONLY = 0
template: $(WORK)/partition.tsv | build
	@test -n "$(CLUSTER)" || { echo "make: set CLUSTER=<cluster id from $(WORK)/report.txt>" >&2; exit 2; }
	$(BIN)/fsim-template $(QUIET) --cluster $(CLUSTER) --fraction $(FRACTION) --report $(WORK)/report.json --files $(WORK)/files.tsv -o $(TEMPLATES_OUT) $(WORK)/partition.tsv
	@echo "marked: run make report again with TEMPLATES=$(TEMPLATES_OUT)"

# The built-in sample: a generated repository with planted near-duplicates,
# a contained file, successive versions, identical copies and a template.
DEMO := demo-work
demo: build
	rm -rf $(DEMO)
	$(BIN)/fsim-gen --manifest $(DEMO)/planted.tsv $(DEMO)/repo
	$(MAKE) -f $(MAKEFILE_SELF) --no-print-directory report REPO=$(DEMO)/repo WORK=$(DEMO)/work FORMATS="txt json html"
	@echo
	@cat $(DEMO)/work/report.txt
	@echo
	@echo "Planted relationships (what the report should show): $(DEMO)/planted.tsv"
	@echo "JSON report: $(DEMO)/work/report.json"
	@echo "HTML report (open in a browser): $(DEMO)/work/report.html"

# Apache Spark (docs/distributed.md): pyspark from PyPI in a venv (Java 17).
SPARK_VENV   ?= .venv-spark
SPARK_PY      = $(SPARK_VENV)/bin/python
PYSPARK_VERSION ?= 3.5.5
SPARK_MASTER ?= local[2]
SPARK_OPTS   ?=
SDEMO        ?= spark-demo-work
# spark-demo compares every report format (each written by a Spark task).
SDEMO_FORMATS ?= txt json tsv html xlsx

spark-venv:
	@test -x $(SPARK_PY) || python3 -m venv $(SPARK_VENV)
	@$(SPARK_PY) -c 'import pyspark' 2>/dev/null || $(SPARK_PY) -m pip install --quiet pyspark==$(PYSPARK_VERSION)

# The whole pipeline on Spark, same settings as `make report`, same bytes out.
spark-report: build spark-venv check-repo
	FSIM_SPARK_PYTHON=$(SPARK_PY) scripts/spark/fsim-spark --master '$(SPARK_MASTER)' --bin $(BIN) \
	  --repo $(REPO) --work $(WORK) $(if $(AVG),--avg $(AVG)) $(if $(METHOD),--method $(METHOD)) --chunk-opts '$(METHOD_OPTS)$(if $(CONTENT), --content $(CONTENT))' \
	  --jobs $(JOBS) $(if $(CAPACITY),--capacity $(CAPACITY)) $(if $(FLOOR),--floor $(FLOOR)) $(if $(MIN_PERCENT),--min-percent $(MIN_PERCENT)) \
	  $(if $(LINES),--lines $(LINES)) $(if $(CATALOGS),--catalogs $(CATALOGS)) $(if $(LINE_FLOOR),--line-floor $(LINE_FLOOR)) \
	  $(if $(MIN_BYTES),--min-bytes $(MIN_BYTES)) --verify $(VERIFY) --regions $(REGIONS) --formats '$(FORMATS)' $(if $(MEMORY),--memory $(MEMORY)) \
	  $(if $(HTML_MAX_VIEWS),--html-max-views $(HTML_MAX_VIEWS)) $(if $(SITE_NAMES),--site-names $(SITE_NAMES)) $(SPARK_OPTS)

# The demo repository through Spark in local mode, checked against make report.
spark-demo: build spark-venv
	rm -rf $(SDEMO)
	$(BIN)/fsim-gen --manifest $(SDEMO)/planted.tsv $(SDEMO)/repo
	$(MAKE) -f $(MAKEFILE_SELF) --no-print-directory spark-report REPO=$(SDEMO)/repo WORK=$(SDEMO)/spark FORMATS='$(SDEMO_FORMATS)'
	$(MAKE) -f $(MAKEFILE_SELF) --no-print-directory report REPO=$(SDEMO)/repo WORK=$(SDEMO)/local FORMATS='$(SDEMO_FORMATS)' KEEP=1 COMPRESS=0
	for f in $(SDEMO_FORMATS); do cmp $(SDEMO)/spark/report.$$f $(SDEMO)/local/report.$$f || exit 1; done
	cmp $(SDEMO)/spark/files.tsv $(SDEMO)/local/files.tsv
	cmp $(SDEMO)/spark/plan.tsv $(SDEMO)/local/plan.tsv
	@# The large outputs stay as parts: NAME.tsv = NAME.parts/part-* concatenated.
	for f in partition bins pairs verified $(if $(filter 1,$(REGIONS)),regions); do \
	  LC_ALL=C cat $(SDEMO)/spark/$$f.parts/part-* | cmp - $(SDEMO)/local/$$f.tsv || exit 1; done
	@echo
	@cat $(SDEMO)/spark/report.txt
	@echo
	@echo "Spark ($(SPARK_MASTER)) report: $(SDEMO)/spark/report.txt, byte-identical to make report's ($(SDEMO)/local)"

# spark-demo on a Spark standalone cluster started here (a master and two
# workers, scripts/spark/standalone), stopped at the end.
spark-cluster-demo: build spark-venv
	@url=$$(FSIM_SPARK_PYTHON=$(SPARK_PY) scripts/spark/standalone start $(SDEMO)-cluster 2) && \
	  $(MAKE) -f $(MAKEFILE_SELF) --no-print-directory spark-demo SPARK_MASTER=$$url; rc=$$?; \
	  scripts/spark/standalone stop $(SDEMO)-cluster; exit $$rc

test:
	$(CARGO) test --all-targets

# The fast loop for a change: the unit tests and every integration
# test (one test binary, tests/tests.rs) but the
# module heavy::, tests/heavy/, that make test and CI run too (4 GiB and
# hostile files, the memory bounds, 10^5-file families, the browser, Spark
# and the pseudo-terminal).
test-fast:
	$(CARGO) build --bins
	$(CARGO) test -p fsim --lib --bins --test tests -- --skip heavy::

# The import layering alone (also part of test and check).
layers:
	$(CARGO) test --quiet -p fsim --test tests rules::layers::

check: lint
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets -- -D warnings
	$(CARGO) test --all-targets

# The scripts' linters: ruff's pyflakes and bugbear rules on the Python
# (not its style rules), shellcheck's warnings on the shell, the head of
# the actions script as POSIX sh, which it runs under (.ci/run
# installs both).
SHELL_SCRIPTS = $(wildcard scripts/*.sh scripts/quality/*.sh scripts/spark/tasks/*.sh) scripts/spark/fsim-spark scripts/spark/measure scripts/spark/standalone .ci/run
lint:
	python3 -m ruff check --isolated --quiet --select F,B,E9 --ignore B905 scripts
	shellcheck -S warning $(SHELL_SCRIPTS)
	shellcheck -S warning -s sh src/report/actions/head.sh

# Benchmarks against md5sum, ssdeep, GNU sort, jdupes, rmlint and
# datasketch; the measurements go to bench-work/bench.json, then
# docs/performance.md is rendered from them (FILES=20000 BIG_MB=200 for a
# quicker run; the knobs in scripts/bench.py). It installs nothing: a
# missing tool stops it with the Debian package to install.
bench:
	python3 scripts/bench.py

# The section "Out of core" of docs/performance.md alone (also part of
# make bench): the default make report inside a memory cgroup of
# OOC_MEMORY + OOC_MARGIN (256M + 64M, page cache included) on a generated
# tree of OOC_FILES files (300000, ~3 GB: 9x that limit), each run from a
# cold page cache, against md5sum in the same group, the reports compared
# with a run outside it. Needs root (cgroup v2 or v1, drop_caches): without
# it, the runs outside the group are measured and the section says why the
# others were skipped.
bench-outofcore:
	BENCH_ONLY=outofcore python3 scripts/bench.py

# The section "10^7 files" of docs/performance.md alone (also part of make
# bench): TM_FILES (10^7) files of ~TM_SIZE (200) bytes by fsim-gen --bulk
# in an ext4 image on a loop device that holds them in its inodes
# (~5 GB), the default make report (TM_MEMORY, TM_CAPACITY: its MEMORY
# and CAPACITY) with every stage's wall time, CPU and peak RSS against
# its memory flag, and md5sum -P2 on the same tree, each from a cold page cache; the work folder
# (~13 GB) in BENCH. Image, mount and work folder removed at the end.
# Needs root, a loop device and the free space: without them, the
# section says which and nothing is measured.
bench-tenmillion:
	BENCH_ONLY=tenmillion python3 scripts/bench.py

# The section "Re-runs and scratch space" of docs/performance.md alone
# (also part of make bench): on a copy of make quality's releases
# (QDIR, or RELEASES_TREE), the OVL_FILES-file overlap tree and
# /usr/share/doc (SHARE_DOC), a run from scratch, 1 % of the files edited
# and make report PREVIOUS= against a run from scratch, the same re-run
# as fsim makes it (DROP_PREVIOUS=1), then the same files touched, the
# same again; each run timed and its work folder
# sampled by scripts/scratch-peak.py, the re-runs' reports compared byte
# for byte. A few minutes; a tree that is missing is named and skipped.
bench-changes:
	BENCH_ONLY=changes python3 scripts/bench.py

# Precision, recall and F1 of fsim (chunk sizes, floors, with and without
# verification), per kind of file (text by size, translation catalogs,
# binary), with each setting's cost, and of datasketch MinHash-LSH, against
# exact similarity (line LCS for text, byte LCS for binary pairs, the latter
# by scripts/quality/bytelcs.c, built with cc) on releases of Django (pip),
# moment (npm) and bash (Debian's source packages), each project's default
# make report timed beside its F1; rewrites docs/quality.md. Cache (corpus, runs, truth):
# $(QDIR), not committed. Its section "Documents" (content views
# against the raw run on generated and PyPI documents, truth by independent
# extractors) comes from scripts/quality/documents.py, which
# `make quality-documents` runs alone (minutes), rewriting only that section.
QDIR ?= quality-work
quality: build quality-venv
	QDIR=$(QDIR) JOBS=$(JOBS) OUT= $(QDIR)/venv/bin/python scripts/quality/documents.py
	QDIR=$(QDIR) JOBS=$(JOBS) python3 scripts/quality/evaluate.py

quality-documents: build quality-venv
	QDIR=$(QDIR) JOBS=$(JOBS) $(QDIR)/venv/bin/python scripts/quality/documents.py

quality-venv:
	QDIR=$(QDIR) bash scripts/quality/fetch.sh
	test -x $(QDIR)/venv/bin/python || python3 -m venv $(QDIR)/venv
	$(QDIR)/venv/bin/python -c 'import datasketch' 2>/dev/null || $(QDIR)/venv/bin/pip install --quiet datasketch==2.0.0
	$(QDIR)/venv/bin/python -c 'import docx, pptx, openpyxl, odf, reportlab, mammoth' 2>/dev/null || $(QDIR)/venv/bin/pip install --quiet -r scripts/quality/requirements-documents.txt

# The HP evaluation paper's controlled experiment (fsim-eval): 100 distinct
# documents of DOCS, near-duplicates with 1..50 words inserted or deleted,
# every method; rewrites $(EVAL_OUT)/ (CSV, SVG) and docs/evaluation.md.
# Default DOCS: Debian's Python standard library (/usr/lib/python3.N, from
# libpython3.N-minimal and -stdlib), else the Rust toolchain's docs.
PYSTDLIB := $(lastword $(sort $(wildcard /usr/lib/python3.[0-9]*)))
ifeq ($(origin DOCS),undefined)
ifneq ($(PYSTDLIB),)
DOCS := $(PYSTDLIB)
DOCS_LABEL ?= Debian's Python $(subst python,,$(notdir $(PYSTDLIB))) standard library
else
DOCS := $(shell rustc --print sysroot 2>/dev/null)/share/doc/rust
DOCS_LABEL ?= the Rust toolchain's documentation
endif
endif
DOCS_LABEL ?= $(DOCS)
EVAL_OUT ?= docs/evaluation
EVAL_MD  ?= docs/evaluation.md

eval: build
	$(BIN)/fsim-eval -j $(JOBS) --docs "$(DOCS)" --docs-label "$(DOCS_LABEL)" -o $(EVAL_OUT) --markdown $(EVAL_MD)

clean-work:
	rm -rf $(WORK) $(DEMO) $(SDEMO) bench-work

clean: clean-work
	$(CARGO) clean
