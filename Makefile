# pptpd -- PPTP VPN server. One make over the whole tree: each folder's
# module.mk says what it builds from what (common/, proto/, gre/, pptpd/,
# ctl/, client/, tests/unit/); the pppd plugin (plugin/Makefile: -fPIC,
# built against pppd's headers, also built alone in a Debian root) and the
# fuzzers (fuzz/Makefile: clang and libFuzzer) keep makefiles of their own.
# Layering, bottom up: common/ <- proto/ <- gre/ <- pptpd/; the client, the
# plugin and pptpctl use proto/ and common/ only (doc/architecture.md).

PREFIX   ?= /usr/local
SBINDIR  ?= $(PREFIX)/sbin
MANDIR   ?= $(PREFIX)/share/man
PLUGINDIR ?= $(PREFIX)/lib/pptpd
SYSCONFDIR ?= /etc
# systemd's unit and tmpfiles.d directories: under /lib and /usr/lib for a
# distribution's /usr, under the prefix otherwise (/usr/local/lib/systemd/
# system is on systemd's search path).
ifeq ($(PREFIX),/usr)
SYSTEMDUNITDIR ?= /lib/systemd/system
else
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
endif
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
DESTDIR  ?=

CC       ?= gcc
OPT      ?= -O2
CFLAGS   ?= $(OPT) -g
EXTRA_CFLAGS ?=
WARN     := -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE
ifeq ($(SANITIZE),1)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
endif
# -MMD -MP: each object's header dependencies, as the compiler saw them.
ALL_CFLAGS  = $(WARN) $(CFLAGS) $(EXTRA_CFLAGS) $(SANFLAGS) -I. -MMD -MP -DCONF_DEFAULT_PLUGIN='"$(PLUGINDIR)/pptpd-policy.so"'
ALL_LDFLAGS = $(LDFLAGS) $(SANFLAGS)

.PHONY: all clean install check unit unit-bin e2e demo plugin regress regress-bisect regress-calibrate regress-history fuzz bench deps valgrind releases bench-scale FORCE
all: pptpd/pptpd ctl/pptpctl plugin

# Objects depend on the flags they were built with: switching SANITIZE=1 or
# EXTRA_CFLAGS rebuilds everything instead of mixing old and new objects.
.build-flags: FORCE
	@echo '$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS)' | cmp -s - $@ || \
		echo '$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS)' > $@

CLEAN :=
include common/module.mk proto/module.mk gre/module.mk pptpd/module.mk \
	ctl/module.mk client/module.mk tests/unit/module.mk
all: client/pptp-load client/pptp-echo

%.o: %.c .build-flags
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
-include $(shell find common proto gre pptpd ctl client tests/unit -name '*.d' 2>/dev/null)

plugin:
	$(MAKE) -C plugin SANITIZE=$(SANITIZE)

# unit-bin: what is built for this release (the C unit tests, the plugin
# against this pppd, the installed unit); unit adds the host-side tools'
# tests (regress/, the newcomer checks), which need git and the tree's
# history and do not change with the release (scripts/check-release runs
# unit-bin only on the other one).
unit: unit-bin
	python3 regress/test_stats.py
	python3 regress/test_releases.py
	python3 regress/test_spec.py
	python3 regress/test_baseline.py
	python3 regress/test_expect.py
	python3 regress/test_path.py
	python3 regress/test_calibrate.py
	python3 regress/test_history.py
	python3 regress/test_hostbusy.py
	tests/newcomer/order.sh
	tests/newcomer/version.sh
	tests/newcomer/layers.sh
	tests/newcomer/plants.sh

# test_daemon's tests run as UNIT_SHARDS processes at once (tests/unit/
# run-sharded): their time is the daemon's timers, not CPU.
UNIT_SHARDS ?= 4
# Under valgrind the daemon is CPU-bound: one at a time (4 at once on two
# cores missed test_daemon's waits for the daemon to listen).
VALGRIND_SHARDS ?= 1
# test_daemon runs twice: as shipped (privsep yes), its worker as `nobody`
# (this machine has no pptpd user: the package's sysusers.d file makes it,
# and the VM's suites use that), then every test again with privsep no.
unit-bin: all $(UNIT_BIN)
	@set -e; for t in $(filter-out tests/unit/test_daemon,$(UNIT_BIN)); do \
		echo "== $$t"; ./$$t; done
	tests/unit/run-sharded $(UNIT_SHARDS) tests/unit/test_daemon \
		PPTPD_TEST_CONF="privsep-user nobody"
	@echo "== tests/unit/test_daemon, every test again with privsep no"
	tests/unit/run-sharded $(UNIT_SHARDS) tests/unit/test_daemon \
		PPTPD_TEST_CONF="privsep no"
	$(MAKE) -C plugin check
	tests/unit/test_load_badinput.py
	tests/systemd/verify.sh

# End-to-end tests need a kernel with PPP: run directly when /dev/ppp exists
# (or the ppp_generic module can be loaded), inside the qemu test bed otherwise.
# E2E_SUITES="tests/e2e/test_X.sh ..." runs only those (default: all of
# tests/e2e/run-all's list).
e2e: all
	scripts/e2e-run tests/e2e/run-all $(E2E_SUITES)

# The daemon under valgrind while control connections and calls come and
# go (tests/unit/test_daemon.c with a stand-in pppd): any error or leak fails.
# privsep no: valgrind (3.19) has no seccomp() (system call 317), so the
# worker could not load its filter. The two processes of privsep yes run
# under ASan and UBSan (`make unit-bin SANITIZE=1`, its first test_daemon).
valgrind: deps
	$(MAKE) all tests/unit/test_daemon
	tests/unit/run-sharded $(VALGRIND_SHARDS) tests/unit/test_daemon PPTPD_VALGRIND=1 \
		PPTPD_TEST_CONF="privsep no"

# What README.md calls "the tests": install what is missing, build, run the
# unit tests, then the end-to-end suites with the real stack.
# make check DEBIAN=13 (or 12): the same on that Debian release when this
# machine runs the other one: built and unit-tested in a root of it, the
# e2e suites in the VM booted over that root (scripts/check-release).
ifeq ($(DEBIAN),)
check: deps
	$(MAKE) unit
	$(MAKE) e2e
else
check: deps
	scripts/check-release $(DEBIAN) $(E2E_SUITES)
endif

# make check-systemd [DEBIAN=13]: the unit under a real systemd. The VM
# boots with systemd as PID 1, installs the build and drives pptpd with
# systemctl, real clients and FreeRADIUS on each data path
# (tests/systemd/check, doc/systemd.md); DEBIAN=N over that release's root.
check-systemd: deps
	tests/systemd/check $(if $(DEBIAN),--debian $(DEBIAN))
.PHONY: check-systemd

deps:
	scripts/install-deps

# make regress VERSION=v0.1.0,HEAD [QUICK=1] [ROUNDS=n] [THRESHOLD=pct]
regress: deps
	regress/regress "$(VERSION)"

# The first commit between GOOD and BAD that regressed (regress/bisect;
# STREAMS=, METRIC= narrow it, QUICK=1 and the rest as for regress).
regress-bisect: deps
	regress/bisect "$(GOOD)" "$(BAD)"

# make regress-history [SINCE=v0.4.0] [QUICK=1] [ROUNDS=n]: every release
# and HEAD in one run, one chart per stream and metric (regress/history).
regress-history: deps
	regress/history $(if $(SINCE),--since $(SINCE)) $(if $(QUICK),--quick) $(if $(ROUNDS),--rounds $(ROUNDS))

# make regress-calibrate [RUNS=20] [REF=HEAD]: the verdict rule's false-alarm
# rate and power, RUNS QUICK runs of REF,REF,REF+plant=cpu5 (regress/calibrate).
regress-calibrate: deps
	regress/calibrate --runs $(or $(RUNS),20) --ref $(or $(REF),HEAD)

# The releases and their commits, with or without tags (regress/releases.py).
releases:
	@regress/releases.py

# make fuzz [FUZZ_SECONDS=n]: every libFuzzer harness for n seconds.
fuzz: deps
	$(MAKE) -C fuzz run FUZZ_SECONDS=$(or $(FUZZ_SECONDS),60)

# Packages first: a fresh machine has no ppp-dev, and the plugin needs its
# headers (a `demo: all` prerequisite compiled before anything was installed).
# `all` in the recipe, not as a prerequisite, so -j cannot run it beside deps.
demo: deps
	$(MAKE) all
	scripts/demo

# make bench-scale [QUICK=1] [KILL=1]: 1000 pptp-load sessions (QUICK: 50)
# from the host against our server and Poptop in the VM
# (scripts/bed/bench_scale.py). KILL=1: ours alone, its worker killed
# (kill -9) at each step with every session streaming; UPGRADE=1: ours
# alone, `pptpctl upgrade` at each step instead; FROM=VERSION (with
# UPGRADE=1): 50 sessions on VERSION's build, upgraded to HEAD's, both
# built as make regress builds them. DATAPATH=kernel: the server's
# `datapath` (default: pptpd.conf's, engine).
bench-scale: all
	scripts/bed/bench_scale.py $(if $(QUICK),--quick) $(if $(KILL),--kill-worker --servers ours) $(if $(UPGRADE),--upgrade --servers ours) $(if $(FROM),--upgrade-from $(FROM)) $(if $(DATAPATH),--conf "datapath $(DATAPATH)")

# make deb: the Debian package pptpd-ng (debian/, doc/packaging.md), built
# by dpkg-buildpackage -b in a copy of the tree (debian/build-deb); the .deb,
# the build log and lintian's report land in build/deb/.
deb: deps
	debian/build-deb build/deb
.PHONY: deb

install: all
	install -D -m 0755 pptpd/pptpd $(DESTDIR)$(SBINDIR)/pptpd
	install -D -m 0755 ctl/pptpctl $(DESTDIR)$(SBINDIR)/pptpctl
	install -D -m 0755 client/pptp-load $(DESTDIR)$(PREFIX)/bin/pptp-load
	install -D -m 0755 client/pptp-echo $(DESTDIR)$(PREFIX)/bin/pptp-echo
	install -D -m 0644 man/pptp-load.1 $(DESTDIR)$(MANDIR)/man1/pptp-load.1
	install -D -m 0644 man/pptpd.8 $(DESTDIR)$(MANDIR)/man8/pptpd.8
	install -D -m 0644 man/pptpctl.8 $(DESTDIR)$(MANDIR)/man8/pptpctl.8
	install -D -m 0644 man/pptpd.conf.5 $(DESTDIR)$(MANDIR)/man5/pptpd.conf.5
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		systemd/pptpd.service.in > $(DESTDIR)$(SYSTEMDUNITDIR)/pptpd.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/pptpd.service
	install -D -m 0644 systemd/pptpd.tmpfiles $(DESTDIR)$(TMPFILESDIR)/pptpd.conf
	install -D -m 0644 systemd/pptpd.sysusers $(DESTDIR)$(SYSUSERSDIR)/pptpd.conf
	@# The worker's user (privsep yes, the default), made now when this is
	@# the system pptpd runs on; a package (DESTDIR) makes it at its own
	@# install. Named by path: $(PREFIX)/lib is not where systemd-sysusers
	@# looks when PREFIX is /usr/local. Without systemd, useradd; if
	@# neither can, the install goes on and says what pptpd will need.
	@if [ -z "$(DESTDIR)" ] && ! getent passwd pptpd >/dev/null; then \
		if command -v systemd-sysusers >/dev/null; then \
			systemd-sysusers $(SYSUSERSDIR)/pptpd.conf; \
		elif command -v useradd >/dev/null; then \
			useradd --system --no-create-home --home-dir / \
			    --shell /usr/sbin/nologin pptpd; \
		else false; fi || echo "make install: could not make the user" \
		    "pptpd, which pptpd's worker runs as (privsep yes): make" \
		    "it, or set privsep-user in pptpd.conf" >&2; fi
	$(MAKE) -C plugin install DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)

clean:
	rm -f $(CLEAN) .build-flags $(shell find common proto gre pptpd ctl client tests/unit -name '*.d' 2>/dev/null)
	-$(MAKE) -C plugin clean
