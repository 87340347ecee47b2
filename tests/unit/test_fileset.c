/* pptpd/fileset.c: the files a reload reads, held by descriptor. What
 * the worker relies on: a replaying set opens only what was handed, each
 * from its start; a recording set keeps only regular files. And
 * conf_load_fs reads pptpd.conf and what it names through the set. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "pptpd/conf.h"
#include "pptpd/fileset.h"
#include "tests/unit/harness.h"

static char dir[] = "/tmp/pptpd-fileset-XXXXXX";
static char conf_path[PATH_MAX], dae_path[PATH_MAX], moved[PATH_MAX];

static void
test_replay_opens_only_what_was_handed(void **state)
{
	struct fileset *fs = fileset_new(FILESET_REPLAY);
	char buf[16] = "";
	int fd = open(conf_path, O_RDONLY);

	assert_int_equal(fileset_add(fs, conf_path, fd), 0);
	assert_int_equal(fileset_open(fs, dae_path, O_RDONLY), -1);
	assert_int_equal(errno, ENOENT);
	/* twice: each from the start */
	for (int i = 0; i < 2; i++) {
		int a = fileset_open(fs, conf_path, O_RDONLY);
		assert_true(a >= 0);
		assert_int_equal(read(a, buf, 7), 7);
		assert_memory_equal(buf, "localip", 7);
		close(a);
	}
	fileset_free(fs);
}

static void
test_record_keeps_regular_files(void **state)
{
	struct fileset *fs = fileset_new(FILESET_RECORD);
	int a = fileset_open(fs, conf_path, O_RDONLY);

	assert_true(a >= 0);
	close(a);
	assert_int_equal(fileset_open(fs, "/dev/null", O_RDONLY), -1);
	assert_int_equal(errno, ESPIPE);
	assert_int_equal(fileset_open(fs, "/nonexistent/x", O_RDONLY), -1);
	assert_int_equal(fileset_count(fs), 1);
	assert_string_equal(fileset_path(fs, 0), conf_path);
	fileset_free(fs);
}

/* What the worker does at a reload: the monitor's recording handed over,
 * the paths then unreadable by name (removed here), the same
 * configuration read. */
static void
test_conf_from_handed_files(void **state)
{
	struct fileset *rec = fileset_new(FILESET_RECORD);
	struct fileset *rep = fileset_new(FILESET_REPLAY);
	struct conf c;
	char err[256];

	conf_init(&c);
	assert_int_equal(conf_load_fs(&c, conf_path, rec, 0, err, sizeof(err)), 0);
	conf_free(&c);
	assert_int_equal(fileset_count(rec), 2);
	for (size_t i = 0; i < fileset_count(rec); i++)
		assert_int_equal(fileset_add(rep, fileset_path(rec, i),
		    dup(fileset_fd(rec, i))), 0);
	fileset_free(rec);
	assert_int_equal(rename(dae_path, moved), 0);
	conf_init(&c);
	assert_int_equal(conf_load_fs(&c, conf_path, rep, 0, err, sizeof(err)), 0);
	assert_non_null(c.dae_clients);
	conf_free(&c);
	/* By name it is gone: the set is what made the read work. */
	conf_init(&c);
	assert_int_equal(conf_load(&c, conf_path, err, sizeof(err)), -1);
	conf_free(&c);
	assert_int_equal(rename(moved, dae_path), 0);
	/* A set without the file the configuration names: refused. */
	fileset_free(rep);
	rep = fileset_new(FILESET_REPLAY);
	assert_int_equal(fileset_add(rep, conf_path, open(conf_path, O_RDONLY)), 0);
	conf_init(&c);
	assert_int_equal(conf_load_fs(&c, conf_path, rep, 0, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "radius-dae-clients"));
	conf_free(&c);
	fileset_free(rep);
}

int
main(void)
{
	char text[PATH_MAX + 128];
	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(conf_path, sizeof(conf_path), "%s/pptpd.conf", dir);
	snprintf(dae_path, sizeof(dae_path), "%s/dae-clients", dir);
	snprintf(moved, sizeof(moved), "%s/moved", dir);
	assert_int_equal(harness_write(dir, "dae-clients", "198.18.0.254 s3cret\n"), 0);
	chmod(dae_path, 0600);
	snprintf(text, sizeof(text), "localip 198.19.0.1\nremoteip "
	    "198.19.0.10-11\nradius-dae-listen 127.0.0.1:3799\n"
	    "radius-dae-clients %s\n", dae_path);
	assert_int_equal(harness_write(dir, "pptpd.conf", text), 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_opens_only_what_was_handed),
		cmocka_unit_test(test_record_keeps_regular_files),
		cmocka_unit_test(test_conf_from_handed_files),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(dae_path);
	unlink(conf_path);
	rmdir(dir);
	return rc;
}
