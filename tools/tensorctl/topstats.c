/* Reading user.tensorfs.stats (topstats.h). What the daemon writes is still checked: a
 * mount of another program, or of an older daemon, must give a clear error, not numbers. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "topstats.h"

const char *const top_counter_names[TOP_NCOUNTERS] = {
	"requests", "reads", "read_bytes", "writes", "write_bytes", "queue_commands",
};

/* A JSON number that is a whole number in [0, 2^53]: what a double holds exactly. */
static int get_count(const cJSON *o, const char *name, uint64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	double d;

	if (!cJSON_IsNumber(v))
		return -EBADMSG;
	d = v->valuedouble;
	if (!(d >= 0 && d <= 9007199254740992.0) || (double)(uint64_t)d != d)
		return -EBADMSG;
	*out = (uint64_t)d;
	return 0;
}

static void get_text(const cJSON *o, const char *name, char *out, size_t size)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	snprintf(out, size, "%s", cJSON_IsString(v) ? v->valuestring : "?");
}

int top_stats_parse(const char *json, size_t len, struct top_stats *out)
{
	cJSON *o = cJSON_ParseWithLength(json, len);
	const cJSON *up;
	uint64_t v;
	int rc = -EBADMSG;

	memset(out, 0, sizeof(*out));
	if (!o)
		return -EBADMSG;
	if (!cJSON_IsObject(o) || get_count(o, "version", &v) || v < 1 ||
	    get_count(o, "pid", &v) || v == 0 || v > 0x7fffffff)
		goto out;
	out->pid = (long)v;
	up = cJSON_GetObjectItemCaseSensitive(o, "uptime");
	if (!cJSON_IsNumber(up) || !(up->valuedouble >= 0) || isinf(up->valuedouble))
		goto out;
	out->uptime = up->valuedouble;
	for (int i = 0; i < TOP_NCOUNTERS; i++)
		if (get_count(o, top_counter_names[i], &out->c[i]))
			goto out;
	get_text(o, "node", out->node, sizeof(out->node));
	get_text(o, "backend", out->backend, sizeof(out->backend));
	rc = 0;
out:
	cJSON_Delete(o);
	return rc;
}

int top_stats_rates(const struct top_stats *a, const struct top_stats *b,
		    double rates[TOP_NCOUNTERS])
{
	double dt = b->uptime - a->uptime;

	if (a->pid != b->pid || dt < 0)
		return -ESTALE;
	for (int i = 0; i < TOP_NCOUNTERS; i++)
		if (b->c[i] < a->c[i])
			return -ESTALE;
	if (dt == 0)
		return -EINVAL;
	for (int i = 0; i < TOP_NCOUNTERS; i++)
		rates[i] = (double)(b->c[i] - a->c[i]) / dt;
	return 0;
}
