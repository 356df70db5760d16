// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * replay.c - run a fuzz target over files, without libFuzzer: linked with one
 * fuzz-*.c, it is the CTest that replays that target's checked-in corpus on
 * every build (any compiler; under ASan/UBSan in the asan preset).
 *
 *   fdr-fuzz-replay-X FILE|DIR...     run every file (a directory's in name order)
 *   fdr-fuzz-replay-X --write-seeds DIR   write the target's hand-made seeds
 *
 * An empty corpus fails: a replay that checks nothing must not pass. So does an
 * input that takes longer than FDR_FUZZ_INPUT_MS (default 1000 ms): a target must
 * never hang, and nothing in the libraries should block for seconds. An input
 * still running after 10 times that is reported and ends the replay at once.
 */
#include "fuzz.h"

#include <dirent.h>
#include <signal.h>
#include <time.h>

static unsigned rp_slow;
static const char *rp_current;

static void rp_on_alarm(int sig)
{
	static const char msg[] = "FAIL: this input hangs: ";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0 ||
	    write(STDOUT_FILENO, rp_current, strlen(rp_current)) < 0 ||
	    write(STDOUT_FILENO, "\n", 1) < 0)
		_exit(1);
	_exit(1);
}

static uint64_t rp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int rp_one(const char *path, unsigned *nr)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (cap - len < 65536) {
			unsigned char *nb = realloc(buf, cap + 65536 + 1);

			if (!nb) {
				fclose(f);
				free(buf);
				return -1;
			}
			buf = nb;
			cap += 65536;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	fclose(f);
	/* an exact-size heap copy, so that ASan sees reads past the input's end */
	{
		unsigned char *exact = malloc(len ? len : 1);

		if (!exact) {
			free(buf);
			return -1;
		}
		const char *env = getenv("FDR_FUZZ_INPUT_MS");
		uint64_t limit = env && *env ? strtoull(env, NULL, 10) : 1000, t0, dt;

		memcpy(exact, buf, len);
		free(buf);
		rp_current = path;
		signal(SIGALRM, rp_on_alarm);
		alarm((unsigned)((limit * 10 + 999) / 1000));
		t0 = rp_now_ms();
		LLVMFuzzerTestOneInput(exact, len);
		dt = rp_now_ms() - t0;
		alarm(0);
		free(exact);
		if (dt > limit) {
			printf("FAIL: %s took %llu ms (limit %llu ms)\n", path,
			       (unsigned long long)dt, (unsigned long long)limit);
			rp_slow++;
		}
	}
	(*nr)++;
	return 0;
}

static int rp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int rp_dir(const char *dir, unsigned *nr)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	int ret = 0;

	if (!d)
		return rp_one(dir, nr);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nv = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*nv));

			if (!nv) {
				ret = -1;
				break;
			}
			names = nv;
		}
		names[n] = malloc(strlen(dir) + strlen(de->d_name) + 2);
		if (!names[n]) {
			ret = -1;
			break;
		}
		sprintf(names[n], "%s/%s", dir, de->d_name);
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), rp_cmp);
	for (i = 0; i < n; i++) {
		if (!ret && rp_slow < 3 && rp_one(names[i], nr))
			ret = -1;
		free(names[i]);
	}
	if (rp_slow >= 3)
		printf("FAIL: stopped after %u slow inputs\n", rp_slow);
	free(names);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned nr = 0;
	int i, failed = 0;

	if (argc == 3 && strcmp(argv[1], "--write-seeds") == 0) {
		if (mkdir(argv[2], 0755) && errno != EEXIST) {
			perror(argv[2]);
			return 1;
		}
		return fdr_fuzz_write_seeds(argv[2]) ? 1 : 0;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR... | --write-seeds DIR\n", argv[0]);
		return 2;
	}
	LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++)
		if (rp_dir(argv[i], &nr))
			failed = 1;
	if (nr == 0) {
		printf("replay: no inputs found\n");
		failed = 1;
	}
	if (rp_slow)
		failed = 1;
	printf("replayed %u inputs\n", nr);
	printf("%u passed, %u failed\n", nr - rp_slow, rp_slow + (failed && !rp_slow));
	return failed;
}
