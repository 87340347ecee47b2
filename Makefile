# pptpd -- PPTP VPN server: daemon (pptpd/), GRE engine (gre/), pppd plugin
# (plugin/), control tool (ctl/pptpctl), shared helpers (common/), regression suite (regress/), tests
# (tests/), VM test bed (scripts/).

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
DESTDIR  ?=

CC       ?= gcc
OPT      ?= -O2
CFLAGS   ?= $(OPT) -g
EXTRA_CFLAGS ?=
WARN     := -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE
ifeq ($(SANITIZE),1)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
endif
ALL_CFLAGS  = $(WARN) $(CFLAGS) $(EXTRA_CFLAGS) $(SANFLAGS) -I. -DCONF_DEFAULT_PLUGIN='"$(PLUGINDIR)/pptpd-policy.so"'
ALL_LDFLAGS = $(LDFLAGS) $(SANFLAGS)
# The metrics endpoint (pptpd/metrics.c) and sd_notify (pptpd/notify.c);
# MD5 and HMAC-MD5 for RADIUS Disconnect-Requests (pptpd/radius.c).
# libbpf: the kernel path's GRE guard (pptpd/kguard.c). libnftables: TCP
# MSS clamping's table (pptpd/mss.c).
LIBS     := -lmicrohttpd -lsystemd -lcrypto -lbpf -lnftables

# common/: byte order, rate limiting, timer lists, string cleaning; used by
# the engine, the daemon and the plugin alike, and depends on neither.
COMMON_SRC := $(wildcard common/*.c)
COMMON_OBJ := $(COMMON_SRC:.c=.o)
GRE_SRC   := $(wildcard gre/*.c)
GRE_OBJ   := $(GRE_SRC:.c=.o)
PPTPD_SRC := $(wildcard pptpd/*.c)
# The report and peers parsers are shared with the plugin (pptpd checks the
# peers file at startup); compiled apart so the plugin's -fPIC objects and
# ours never get mixed up.
PPTPD_OBJ := $(PPTPD_SRC:.c=.o) pptpd/report-parse.o pptpd/peers-parse.o \
	pptpd/bpf/kguard-obj.o
PPTPD_LIBOBJ := $(filter-out pptpd/main.o,$(PPTPD_OBJ))

UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNIT_BIN  := $(UNIT_SRC:.c=)

.PHONY: all clean install check unit unit-bin e2e demo plugin regress regress-bisect fuzz bench deps valgrind releases bench-scale FORCE
all: pptpd/pptpd ctl/pptpctl plugin

# Objects depend on the flags they were built with: switching SANITIZE=1 or
# EXTRA_CFLAGS rebuilds everything instead of mixing old and new objects.
.build-flags: FORCE
	@echo '$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS)' | cmp -s - $@ || \
		echo '$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS)' > $@

common/libcommon.a: $(COMMON_OBJ)
	$(AR) rcs $@ $^

gre/libgre.a: $(GRE_OBJ)
	$(AR) rcs $@ $^

# pptpctl shares only the protocol of pptpd/ctl.h and common/'s headers.
ctl/pptpctl: ctl/pptpctl.c pptpd/ctl.h pptpd/version.h common/strclean.h .build-flags
	$(CC) $(ALL_CFLAGS) -o $@ ctl/pptpctl.c $(ALL_LDFLAGS)

pptpd/pptpd: $(PPTPD_OBJ) gre/libgre.a common/libcommon.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(PPTPD_OBJ) gre/libgre.a common/libcommon.a $(LIBS)

%.o: %.c $(wildcard common/*.h gre/*.h pptpd/*.h) .build-flags
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The kernel path's GRE guard: its eBPF program (pptpd/bpf/kguard.c, with
# the rules of pptpd/kguard-rule.h) built by clang for the BPF target, with
# the kernel's UAPI headers of this machine's multiarch directory (asm/),
# and embedded in pptpd by an assembler .incbin (pptpd/bpf/kguard-obj.S).
BPF_CLANG  ?= clang
BPF_CFLAGS := -O2 -g -target bpf -Wall -Wextra -Werror -I. \
	-I/usr/include/$(shell gcc -print-multiarch 2>/dev/null)
pptpd/bpf/kguard.bpf.o: pptpd/bpf/kguard.c pptpd/kguard-rule.h
	$(BPF_CLANG) $(BPF_CFLAGS) -c -o $@ $<
pptpd/bpf/kguard-obj.o: pptpd/bpf/kguard-obj.S pptpd/bpf/kguard.bpf.o .build-flags
	$(CC) -c -o $@ $<

pptpd/report-parse.o: plugin/report.c plugin/report.h .build-flags
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

pptpd/peers-parse.o: plugin/peers.c plugin/peers.h .build-flags
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

plugin:
	$(MAKE) -C plugin SANITIZE=$(SANITIZE)

tests/unit/test_%: tests/unit/test_%.c $(PPTPD_LIBOBJ) gre/libgre.a common/libcommon.a .build-flags
	$(CC) $(ALL_CFLAGS) -Wno-unused-parameter -o $@ $< $(PPTPD_LIBOBJ) gre/libgre.a common/libcommon.a $(ALL_LDFLAGS) $(LIBS) -lcmocka

# client/: pptp-load
# The userspace PPP client (client/ppp.h: LCP, auth, CCP/MPPE, IPCP,
# IPV6CP) as client/libppp.a, for pptp-load and its unit tests; crypto
# from libcrypto (client/crypto.h says which API and why).
CLIENT_OBJ   := $(addprefix client/,mschap.o mppe.o fsm.o lcp.o auth.o ccp.o ipcp.o ipv6cp.o ppp.o)
CLIENT_LIBS  := -lcrypto
CLIENT_TESTS := tests/unit/test_mschap tests/unit/test_mppe tests/unit/test_ppp_client
all: client/libppp.a
$(CLIENT_OBJ): $(wildcard client/*.h)
client/libppp.a: $(CLIENT_OBJ)
	$(AR) rcs $@ $^
$(CLIENT_TESTS): tests/unit/test_%: tests/unit/test_%.c client/libppp.a .build-flags
	$(CC) $(ALL_CFLAGS) -Wno-unused-parameter -o $@ $< client/libppp.a $(ALL_LDFLAGS) $(CLIENT_LIBS) -lcmocka
client/bench_mppe: client/bench_mppe.c client/libppp.a .build-flags
	$(CC) $(ALL_CFLAGS) -o $@ $< client/libppp.a $(ALL_LDFLAGS) $(CLIENT_LIBS)
bench-mppe: client/bench_mppe
	client/bench_mppe
clean: clean-ppp
clean-ppp:
	rm -f $(CLIENT_OBJ) client/libppp.a client/bench_mppe
.PHONY: bench-mppe clean-ppp
# end client/: pptp-load

# test_daemon preloads it into the daemon to fix its "random" Call IDs.
tests/fixtures/fixed-getrandom.so: tests/fixtures/fixed-getrandom.c
	$(CC) -std=c11 -Wall -Wextra -Werror -O2 -shared -fPIC -o $@ $<
tests/unit/test_daemon: tests/fixtures/fixed-getrandom.so

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
	tests/newcomer/order.sh
	tests/newcomer/version.sh

unit-bin: all $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; ./$$t; done
	$(MAKE) -C plugin check
	tests/unit/test_load_badinput.py
	tests/systemd/verify.sh

# client/: pptp-load (session side) and pptp-echo
# pptp-load: the sessions, control connections, GRE, streams and report,
# linked with the userspace PPP (client/libppp.a, built by the block of
# that name) and pptpd/msg.c's codec; pptp-echo, its sink/echo service,
# shares only the probe format and the accounting.
LOAD_OBJ := $(addprefix client/,main.o ctrl.o grelink.o session.o stream.o \
	acct.o probe.o ipudp.o report.o)
ECHO_OBJ := $(addprefix client/,pptp-echo.o probe.o acct.o)
# What the unit tests of the session side link (no PPP).
LOAD_TEST_OBJ := $(addprefix client/,ctrl.o acct.o probe.o ipudp.o stream.o) \
	pptpd/msg.o
all: client/pptp-load client/pptp-echo
$(LOAD_OBJ) client/pptp-echo.o: client/%.o: client/%.c $(wildcard client/*.h common/*.h gre/*.h pptpd/msg.h) .build-flags
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
client/pptp-load: $(LOAD_OBJ) client/libppp.a pptpd/msg.o gre/libgre.a common/libcommon.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(LOAD_OBJ) client/libppp.a pptpd/msg.o gre/libgre.a common/libcommon.a -lcrypto
client/pptp-echo: $(ECHO_OBJ) common/libcommon.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(ECHO_OBJ) common/libcommon.a
tests/unit/test_load_%: tests/unit/test_load_%.c $(LOAD_TEST_OBJ) common/libcommon.a .build-flags
	$(CC) $(ALL_CFLAGS) -Wno-unused-parameter -o $@ $< $(LOAD_TEST_OBJ) common/libcommon.a $(ALL_LDFLAGS) -lcmocka
# The whole send path per packet on one core (client/bench_load.c).
client/bench_load: client/bench_load.c client/grelink.o client/ipudp.o client/libppp.a gre/libgre.a common/libcommon.a .build-flags
	$(CC) $(ALL_CFLAGS) -o $@ $< client/grelink.o client/ipudp.o client/libppp.a gre/libgre.a common/libcommon.a $(ALL_LDFLAGS) $(CLIENT_LIBS)
bench-load: client/bench_load
	client/bench_load
.PHONY: bench-load
clean: clean-load
.PHONY: clean-load
clean-load:
	rm -f $(LOAD_OBJ) $(ECHO_OBJ) client/pptp-load client/pptp-echo client/bench_load

# End-to-end tests need a kernel with PPP: run directly when /dev/ppp exists
# (or the ppp_generic module can be loaded), inside the qemu test bed otherwise.
# E2E_SUITES="tests/e2e/test_X.sh ..." runs only those (default: all of
# tests/e2e/run-all's list).
e2e: all
	scripts/e2e-run tests/e2e/run-all $(E2E_SUITES)

# The daemon under valgrind while control connections and calls come and
# go (tests/unit/test_daemon.c with a stand-in pppd): any error or leak fails.
valgrind: deps
	$(MAKE) all tests/unit/test_daemon
	PPTPD_VALGRIND=1 tests/unit/test_daemon

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

bench: gre/libgre.a common/libcommon.a
	$(MAKE) -C gre/bench

# make bench-scale [QUICK=1]: 1000 pptp-load sessions (QUICK: 50) from the
# host against our server and Poptop in the VM (scripts/bed/bench_scale.py).
bench-scale: all
	scripts/bed/bench_scale.py $(if $(QUICK),--quick)

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
	$(MAKE) -C plugin install DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)

clean:
	rm -f tests/fixtures/fixed-getrandom.so common/*.o common/libcommon.a gre/*.o gre/libgre.a pptpd/*.o pptpd/bpf/*.o pptpd/pptpd ctl/pptpctl $(UNIT_BIN) .build-flags
	-$(MAKE) -C plugin clean
