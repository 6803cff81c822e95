# Convenience wrapper around CMake. `make` builds, `make check` runs every
# test (plain and ASan+UBSan builds), `make bench` runs the benchmarks.
BUILD ?= build
PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all check bench install clean demo

all:
	cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	cmake --build $(BUILD) -j$(JOBS)

demo: all
	./$(BUILD)/execbox run -l python -c 'import platform, os; print("hello from", platform.python_version(), "as uid", os.getuid(), "in", os.getcwd())'

check:
	scripts/check.sh

bench: all
	bench/run.sh $(BUILD)
	bench/pool.sh $(BUILD)

install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) build-asan *.log
