# The README's two commands: `make run` and `make test`. Both install what is missing, configure and build.
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)
CONFIG ?= configs/default.textproto
OUT ?= runs/mechanisms
CMAKE_FLAGS ?=
PREFIX ?= $(HOME)/.local

.PHONY: deps configure build run test test-asan test-tsan pgo bench bench-growth bench-million bench-targets \
  fuzz format install clean

deps:
	@./scripts/install-deps.sh

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

configure: $(BUILD)/build.ninja

build: deps configure
	cmake --build $(BUILD) -j $(JOBS)

# Synergy's experiment under each mechanism (one seed), the comparison table, then the report.
MECHANISMS ?= proportional,greedy,tune,opt
# Builds only the troupe binary (not the tests or benchmarks).
run: deps configure
	@test -x $(BUILD)/apps/troupe || echo "make run: building troupe, about 3.5 minutes the first time on 2 idle cores"
	cmake --build $(BUILD) -j $(JOBS) --target troupe
	./$(BUILD)/apps/troupe sweep $(CONFIG) --over scheduler.mechanism=$(MECHANISMS) \
	  --set run.lease_log=true --out $(OUT)
	./$(BUILD)/apps/troupe report $(OUT) --out $(OUT)/report  # the runs in the sweep's order

# Builds what the tests run (the troupe binary and the two test programs), not the benchmarks.
test: deps configure
	@test -x $(BUILD)/tests/troupe_integration_tests || echo "make test: building troupe and the tests, about 10 minutes the first time on 2 idle cores"
	cmake --build $(BUILD) -j $(JOBS) --target troupe troupe_unit_tests troupe_integration_tests
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Each test is labelled unit, integration or process, and slow beside that when it takes long
# (over 25 s under the sanitizers; tests/TestLabels.cmake says which is which): `ctest -L LABEL`
# runs one kind. make test runs them all. Under AddressSanitizer + UndefinedBehaviorSanitizer, in a
# second build folder, every test but the slow ones (25 of them, about half the sanitizer build's
# test time).
test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTROUPE_SANITIZE=ON \
	  -DTROUPE_CUDA=OFF -DTROUPE_BENCHMARKS=OFF $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target troupe troupe_unit_tests troupe_integration_tests
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) -LE slow

# Under ThreadSanitizer, in build-tsan/: the process tests (the real mode on the wall clock, runs
# across processes), the slow ones aside. It builds CAF 0.17.6 with ThreadSanitizer first, once
# (scripts/tsan.sh says why).
test-tsan: deps
	JOBS=$(JOBS) ./scripts/tsan.sh

# troupe in PREFIX/bin (default ~/.local/bin), its configs and plotting scripts in
# PREFIX/share/troupe: `troupe run` and `troupe report` then work from any folder.
install: deps configure
	cmake --build $(BUILD) -j $(JOBS) --target troupe
	cmake --install $(BUILD) --prefix $(PREFIX)

# troupe built with profile-guided and link-time optimisation in build-pgo/ (the same results,
# 0.91-0.92x the CPU on a large run); about twice a plain build's time.
pgo: deps
	./scripts/build-pgo.sh

bench: build
	./scripts/bench.sh

# Cost curves (wall, CPU, memory against jobs and GPUs, with fitted exponents); tens of minutes.
bench-growth: build
	./scripts/bench-growth.sh

# The million-job stream on 16,384 GPUs (TUNE) alone, from the deep-queue benchmark; about a minute.
bench-million: build
	REPEAT=1 ./scripts/bench-queues.sh million

# Every emulated run's speed and memory target, each run timed on its own; about two minutes.
bench-targets: build
	./scripts/bench-targets.sh

# libFuzzer on the agent protocol's decoder and state machine (clang, build-fuzz/), bounded time.
FUZZ_SECONDS ?= 45
fuzz: deps
	./scripts/fuzz.sh $(FUZZ_SECONDS)

format:
	find actors agent apps base bench config faults gpu messages paramserver runner runtime \
	  scheduling workload live \
	  tests -name '*.cpp' -o -name '*.hpp' \
	  -o -name '*.cu' -o -name '*.cuh' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
