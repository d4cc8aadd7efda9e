# earlyinit: see README.md. `make demo` and `make test` are all a fresh
# Debian machine needs (as root): both install what they use.

SHELL   := /bin/bash
GO      ?= go
BUILD   := build
# The kernel whose modules go into the initramfs: the newest /boot/vmlinuz-*.
KVER    ?= $(shell ls /boot/vmlinuz-* 2>/dev/null | sed 's|^/boot/vmlinuz-||' | sort -V | tail -n 1)
export CGO_ENABLED := 0
# The version, from git (packaging/version.sh): in the binary (boot.Version)
# and the packages. SOURCE_DATE_EPOCH, the commit's time, dates every file in
# the packages, so a commit gives the same packages; it is given to nfpm
# alone (xorriso and mkfs.fat in the tests read it too).
VERSION := $(shell ./packaging/version.sh)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)
# nfpm, pinned and run through `go run` so it is no dependency of earlyinit.
NFPM    := $(GO) run github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2
NFPM_CONFIG ?= packaging/nfpm.yaml
PKG_DEB := $(BUILD)/earlyinit_$(VERSION)_amd64.deb
PKG_RPM := $(BUILD)/earlyinit-$(VERSION)-1.x86_64.rpm

.PHONY: all build initramfs package package-test deps deps-demo test unit qemu-test demo bench vet fuzz clean FORCE

all: build initramfs

# Two builds of one program: earlyinit (/usr/bin/earlyinit) and its
# initramfs build (build tags initrd: no TLS, none of the image- and
# package-building verbs; nolate: no late-stage runner, since
# /usr/bin/earlyinit runs the late stages), which the package ships for
# `earlyinit initramfs` to pack as /init, so the generic initramfs stays
# under 6 MB and a host-only one under 3 MB. make initramfs packs the tag
# initrd build alone (initramfs/gobuild): its late stages run from a copy
# on roots without the package.
build: $(BUILD)/earlyinit $(BUILD)/earlyinit-initrd

GOBUILD := $(GO) build -trimpath -gcflags=all=-l -ldflags='-s -w -buildid= -X github.com/earlyinit/earlyinit/internal/boot.Version=$(VERSION)'

$(BUILD)/earlyinit: FORCE
	@mkdir -p $(BUILD)
	$(GOBUILD) -o $@ ./cmd/earlyinit
	@ls -l $@ | awk '{printf "%s: %.2f MB\n", $$NF, $$5/1e6}'

$(BUILD)/earlyinit-initrd: FORCE
	@mkdir -p $(BUILD)
	$(GOBUILD) -tags initrd,nolate -o $@ ./cmd/earlyinit
	@ls -l $@ | awk '{printf "%s: %.2f MB\n", $$NF, $$5/1e6}'

initramfs: $(BUILD)/initramfs.img

$(BUILD)/initramfs.img: FORCE
	@mkdir -p $(BUILD)
	@test -n "$(KVER)" || { echo "no /boot/vmlinuz-*: run make deps" >&2; exit 1; }
	$(GO) run ./cmd/mkinitramfs -kver $(KVER) -o $@

# The .deb and .rpm (packaging/nfpm.yaml), with the manual page and the
# changelog they ship; older versions' packages are removed first, so build/
# holds one of each.
package: build
	rm -f $(BUILD)/earlyinit_*.deb $(BUILD)/earlyinit-*.rpm $(BUILD)/earlyinit.8 $(BUILD)/earlyinit.8.gz $(BUILD)/earlyinit.bash
	$(BUILD)/earlyinit man > $(BUILD)/earlyinit.8
	gzip -9n $(BUILD)/earlyinit.8
	$(BUILD)/earlyinit completion bash > $(BUILD)/earlyinit.bash
	./packaging/changelog.sh $(VERSION) | gzip -9n > $(BUILD)/changelog.gz; exit $${PIPESTATUS[0]}
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) EARLYINIT_VERSION=$(VERSION) $(NFPM) package --config $(NFPM_CONFIG) --packager deb --target $(PKG_DEB)
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) EARLYINIT_VERSION=$(VERSION) $(NFPM) package --config $(NFPM_CONFIG) --packager rpm --target $(PKG_RPM)

# The packages' contents, metadata, scripts and lintian (build tag package).
package-test: package
	$(GO) test -tags package -count=1 ./packaging/

deps:
	./scripts/deps.sh

deps-demo:
	./scripts/deps.sh demo

# Plain, and again with the tags that select the QEMU tests, the package
# tests and the fault-injecting test build, so every file is vetted.
vet:
	$(GO) vet ./...
	$(GO) vet -tags qemu,faultinject,package ./...
	$(GO) vet -tags initrd ./cmd/earlyinit/ ./internal/httpget/ ./internal/provision/ ./internal/modules/...
	$(GO) vet -tags initrd,nolate ./cmd/earlyinit/ ./internal/provision/
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo "gofmt needed" >&2; exit 1; }

# Unit tests: every package, and again the ones the initramfs builds (tags
# initrd and initrd,nolate) change. The QEMU boots are behind the qemu build tag
# (qemu-test), so this needs Go alone.
unit:
	@echo "differential oracle: cloud-init $$(dpkg-query -W -f='$${Version}' cloud-init 2>/dev/null || echo 'not installed')"
	$(GO) test ./...
	$(GO) test -tags initrd ./cmd/earlyinit/ ./internal/httpget/ ./internal/provision/
	$(GO) test -tags initrd -run TestHostKeysInitrdBuild ./internal/modules/accounts/
	$(GO) test -tags initrd,nolate ./internal/provision/
	$(GO) test -tags initrd,nolate -run TestInitrdVerbs ./cmd/earlyinit/

# The same initramfs with the faultinject build tag: earlyinit.test_panic=
# panics in the named steps. For the QEMU tests only; never shipped, so
# lz4, which packs it in a second where zstd -19 takes 20.
$(BUILD)/initramfs-faultinject.img: FORCE
	@mkdir -p $(BUILD)
	$(GO) run ./cmd/mkinitramfs -kver $(KVER) -tags faultinject -compress lz4 -o $@

# QEMU-booted integration tests (build tag qemu), with each initramfs built
# once.
qemu-test: initramfs $(BUILD)/initramfs-faultinject.img package
	EARLYINIT_INITRAMFS=$(CURDIR)/$(BUILD)/initramfs.img EARLYINIT_KVER=$(KVER) \
	EARLYINIT_INITRAMFS_FAULTINJECT=$(CURDIR)/$(BUILD)/initramfs-faultinject.img \
		$(GO) test -tags qemu -count=1 -timeout 75m -v ./qemu-tests/ 2>&1 | tee $(BUILD)/qemu-test.log | grep -E '^(=== RUN|--- |PASS|FAIL|ok|qemu-tests:)|_test.go'; \
		exit $${PIPESTATUS[0]}


# Fuzzing, not part of `make test`: every Fuzz* target under internal/ and cmd/, one
# after the other, FUZZTIME each (FUZZ=regexp picks targets by name). A
# crasher is left in the package's testdata/fuzz and the run goes on; the
# exit status says whether any target failed.
FUZZTIME ?= 30s
FUZZ     ?= .
fuzz:
	@failed=; for f in $$(grep -rlE --include='*_test.go' '^func Fuzz' internal cmd | sort); do \
		for t in $$(grep -oE '^func Fuzz[A-Za-z0-9_]*' $$f | cut -d' ' -f2 | grep -E -- '$(FUZZ)'); do \
			echo "== ./$$(dirname $$f) $$t, $(FUZZTIME)"; \
			$(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) ./$$(dirname $$f) || failed="$$failed $$t"; \
		done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: failed:$$failed" >&2; exit 1; fi; echo "fuzz: every target passed"

test: deps vet build unit package-test qemu-test

# The demo installs only its own few packages (deps.sh demo), not the
# test suite's.
demo: deps-demo build initramfs
	$(GO) run ./qemu-tests/demo -kernel /boot/vmlinuz-$(KVER) -initrd $(BUILD)/initramfs.img

bench-late: ; ./bench/late-vs-cloudinit.sh $(BENCH_RUNS)

# The pipeline's benchmark (BenchmarkRun, also on an SELinux root) and the
# SELinux policy's per boot (BenchmarkBoot: every expression checked at
# load, as before issue 31; BootDeferred and BootWrites: OpenRoot's), then
# issue 18's figures side by side in one run (bench/before-after.sh):
# start-up against a static hello-world, net-convert against cloud-init's,
# and the demo VM's boot per step, each for this tree and for BENCH_BEFORE
# (built in a git worktree under build/, removed afterwards). Runs:
# STARTUP_RUNS (200), NET_RUNS (10), BOOT_RUNS (3), from the environment.
BENCH_BEFORE ?= 45dbdbf
bench: build initramfs
	$(GO) test -run XXX -bench . -benchtime 200x ./internal/provision
	$(GO) test -run XXX -bench Boot -benchtime 50x ./internal/selinux
	./bench/size.sh
	./bench/before-after.sh $(BENCH_BEFORE)

# net-convert for every renderer (hyperfine when installed), and the demo
# VM's boot as its console reports it.
bench-net-convert: build
	./bench/net-convert.sh build/earlyinit 5

bench-boot: build initramfs
	./bench/boot.sh 3

clean:
	rm -rf $(BUILD)
