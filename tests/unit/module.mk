# tests/unit/: the C unit tests (cmocka). The client's link its own
# objects; every other test links the daemon's objects and libraries.
UNIT_BIN := $(patsubst %.c,%,$(wildcard tests/unit/test_*.c))
UNIT_PPP := tests/unit/test_mschap tests/unit/test_mppe tests/unit/test_ppp_client
UNIT_LOAD := $(filter tests/unit/test_load_%,$(UNIT_BIN))
UNIT_CTL := tests/unit/test_upwait
UNIT_DAEMON := $(filter-out $(UNIT_PPP) $(UNIT_LOAD) $(UNIT_CTL),$(UNIT_BIN))
UNIT_CFLAGS = $(ALL_CFLAGS) -Wno-unused-parameter

$(UNIT_DAEMON): tests/unit/test_%: tests/unit/test_%.c $(PPTPD_LIBOBJ) gre/libgre.a proto/libproto.a common/libcommon.a .build-flags
	$(CC) $(UNIT_CFLAGS) -o $@ $< $(PPTPD_LIBOBJ) $(PPTPD_LIBS) $(ALL_LDFLAGS) -lcmocka
$(UNIT_PPP): tests/unit/test_%: tests/unit/test_%.c client/libppp.a proto/libproto.a .build-flags
	$(CC) $(UNIT_CFLAGS) -o $@ $< client/libppp.a proto/libproto.a $(ALL_LDFLAGS) -lcrypto -lcmocka
$(UNIT_LOAD): tests/unit/test_%: tests/unit/test_%.c $(LOAD_TEST_OBJ) proto/libproto.a common/libcommon.a .build-flags
	$(CC) $(UNIT_CFLAGS) -o $@ $< $(LOAD_TEST_OBJ) proto/libproto.a common/libcommon.a $(ALL_LDFLAGS) -lcmocka

$(UNIT_CTL): tests/unit/test_%: tests/unit/test_%.c ctl/talk.o ctl/upwait.o common/libcommon.a .build-flags
	$(CC) $(UNIT_CFLAGS) -o $@ $< ctl/talk.o ctl/upwait.o common/libcommon.a $(ALL_LDFLAGS) -lcmocka

# test_daemon preloads it into the daemon to fix its "random" Call IDs.
tests/fixtures/fixed-getrandom.so: tests/fixtures/fixed-getrandom.c
	$(CC) -std=c11 -Wall -Wextra -Werror -O2 -shared -fPIC -o $@ $<
tests/unit/test_daemon: tests/fixtures/fixed-getrandom.so
CLEAN += $(UNIT_BIN) tests/unit/*.d tests/fixtures/fixed-getrandom.so
