#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmd.h"
#include "dtype.h"
#include "strutil.h"
#include "tier.h"

/* Copies a string field; -1 when present but not a string or too long. */
static int get_str(const cJSON *o, const char *key, char *dst, size_t size)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v) || strlen(v->valuestring) >= size)
		return -1;
	strcpy(dst, v->valuestring);
	return 1;
}

static int is_integer(const cJSON *v, double lo, double hi)
{
	return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
	       v->valuedouble >= lo && v->valuedouble <= hi;
}

static int parse_shape(const cJSON *v, struct tfs_shape *sh)
{
	const cJSON *d;
	int n = 0;

	if (cJSON_IsString(v))
		return tfs_shape_parse(v->valuestring, strlen(v->valuestring), sh);
	if (!cJSON_IsArray(v))
		return -EINVAL;
	memset(sh, 0, sizeof(*sh));
	cJSON_ArrayForEach(d, v) {
		if (n == TFS_MAX_DIMS)
			return -E2BIG;
		/* 2^53 - 1: past it a JSON number may have been rounded on the way in. */
		if (!is_integer(d, 0, 9007199254740991.0))
			return -EINVAL;
		sh->dims[n++] = (uint64_t)d->valuedouble;
	}
	sh->ndim = n;
	return 0;
}

/* Whether a JSON text escapes a NUL (\u0000) in some string: cJSON would end the string
 * there, and "create\u0000junk" would read as "create". */
static int escapes_nul(const char *json, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (json[i] != '\\')
			continue;
		if (json[i + 1] == 'u' && i + 5 < len && json[i + 2] == '0' && json[i + 3] == '0' &&
		    json[i + 4] == '0' && json[i + 5] == '0')
			return 1;
		i++;                  /* the escaped character */
	}
	return 0;
}

/* Names from the queue reach logs and keys: no control characters. */
static int has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < ' ' || *s == 0x7f)
			return 1;
	return 0;
}

int tfs_cmd_parse(const char *json, size_t len, struct tfs_cmd *cmd, char *err, size_t errlen)
{
	cJSON *o;
	const cJSON *v;
	char op[16] = "";
	uint64_t bytes;
	int rc;

	memset(cmd, 0, sizeof(*cmd));
	o = cJSON_ParseWithLength(json, len);
	if (!o)
		return tfs_errf(err, errlen, -EINVAL, "malformed JSON");
	if (!cJSON_IsObject(o)) {
		rc = tfs_errf(err, errlen, -EINVAL, "command is not a JSON object");
		goto out;
	}
	/* id and reply first, so that every later error can still be answered. */
	if (get_str(o, "id", cmd->id, sizeof(cmd->id)) < 0) {
		rc = tfs_errf(err, errlen, -EINVAL, "'id' must be a string under %d bytes", TFS_CMD_STR);
		goto out;
	}
	if (get_str(o, "reply", cmd->reply, sizeof(cmd->reply)) < 0) {
		rc = tfs_errf(err, errlen, -EINVAL, "'reply' must be a string under %d bytes", TFS_CMD_STR);
		goto out;
	}
	if (escapes_nul(json, len)) {
		rc = tfs_errf(err, errlen, -EINVAL, "a string holds a NUL character (\\u0000)");
		goto out;
	}
	if (get_str(o, "op", op, sizeof(op)) <= 0) {
		rc = tfs_errf(err, errlen, -EINVAL, "missing or non-string 'op'");
		goto out;
	}
	if (strcmp(op, "create") == 0)
		cmd->op = TFS_OP_CREATE;
	else if (strcmp(op, "get") == 0)
		cmd->op = TFS_OP_GET;
	else if (strcmp(op, "delete") == 0)
		cmd->op = TFS_OP_DELETE;
	else if (strcmp(op, "renew") == 0)
		cmd->op = TFS_OP_RENEW;
	else {
		rc = tfs_errf(err, errlen, -EINVAL, "unknown op '%s'", op);
		goto out;
	}
	rc = get_str(o, "name", cmd->name, sizeof(cmd->name));
	if (rc > 0 && has_control(cmd->name))
		rc = -EINVAL;
	if (rc <= 0 || (rc = tfs_name_check(cmd->name)) < 0) {
		rc = tfs_errf(err, errlen, rc == -ENAMETOOLONG ? rc : -EINVAL,
			  "missing or invalid 'name'");
		goto out;
	}
	if (get_str(o, "node", cmd->node, sizeof(cmd->node)) < 0 ||
	    (cmd->node[0] && !tfs_word_ok(cmd->node, TFS_NODE_MAX))) {
		rc = tfs_errf(err, errlen, -EINVAL, "'node' must be a word of printable characters "
			      "without ':', '{', '}' or '*', under %d bytes", TFS_NODE_MAX);
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "pid");
	if (v && !cJSON_IsNull(v)) {
		if (!is_integer(v, 1, 4194304)) {
			rc = tfs_errf(err, errlen, -EINVAL, "'pid' must be a positive integer");
			goto out;
		}
		cmd->pid = (int64_t)v->valuedouble;
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "lease");
	if (v && !cJSON_IsNull(v)) {
		if (!is_integer(v, 1, 86400)) {
			rc = tfs_errf(err, errlen, -EINVAL, "'lease' must be whole seconds, 1 to 86400");
			goto out;
		}
		cmd->lease = (int64_t)v->valuedouble;
	}
	if (cmd->op == TFS_OP_RENEW && (!cmd->lease || !cmd->pid)) {
		rc = tfs_errf(err, errlen, -EINVAL, "renew needs 'pid' and 'lease'");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "device");
	if (v && !cJSON_IsNull(v)) {
		if (cJSON_IsString(v) && strcmp(v->valuestring, "cpu") == 0) {
			cmd->device = TFS_DEVICE_CPU;
			cmd->has_device = 1;
		} else if (!is_integer(v, 0, 1 << 20)) {
			rc = tfs_errf(err, errlen, -EINVAL,
				      "'device' must be \"cpu\" or an integer >= 0");
			goto out;
		} else {
			cmd->device = (int)v->valuedouble;
			cmd->has_device = 1;
		}
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "dtype");
	if (v && !cJSON_IsNull(v)) {
		if (!cJSON_IsString(v) ||
		    tfs_dtype_parse(v->valuestring, strlen(v->valuestring), &cmd->dtype)) {
			rc = tfs_errf(err, errlen, -EINVAL, "unknown 'dtype'");
			goto out;
		}
		cmd->has_dtype = 1;
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "shape");
	if (v && !cJSON_IsNull(v)) {
		rc = parse_shape(v, &cmd->shape);
		if (rc) {
			rc = tfs_errf(err, errlen, rc, rc == -E2BIG ? "'shape' has more than %d dims" :
				  "'shape' must be an array of integers >= 0", TFS_MAX_DIMS);
			goto out;
		}
		cmd->has_shape = 1;
	}
	if (cmd->op == TFS_OP_CREATE) {
		if (!cmd->has_dtype || !cmd->has_shape) {
			rc = tfs_errf(err, errlen, -EINVAL, "create needs 'dtype' and 'shape'");
			goto out;
		}
		if (tfs_shape_bytes(&cmd->shape, tfs_dtype_size(cmd->dtype), &bytes)) {
			rc = tfs_errf(err, errlen, -EOVERFLOW, "'shape' byte count overflows");
			goto out;
		}
	}
	rc = 0;
out:
	cJSON_Delete(o);
	return rc;
}

char *tfs_cmd_build(const struct tfs_cmd *cmd)
{
	static const char *ops[] = { "", "create", "get", "delete", "renew" };
	cJSON *o = cJSON_CreateObject(), *dims;
	char *s;

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "op", ops[cmd->op]);
	cJSON_AddStringToObject(o, "name", cmd->name);
	if (cmd->has_dtype)
		cJSON_AddStringToObject(o, "dtype", tfs_dtype_name(cmd->dtype));
	if (cmd->has_shape) {
		dims = cJSON_AddArrayToObject(o, "shape");
		for (int i = 0; dims && i < cmd->shape.ndim; i++)
			cJSON_AddItemToArray(dims, cJSON_CreateNumber((double)cmd->shape.dims[i]));
	}
	if (cmd->has_device && cmd->device == TFS_DEVICE_CPU)
		cJSON_AddStringToObject(o, "device", "cpu");
	else if (cmd->has_device)
		cJSON_AddNumberToObject(o, "device", cmd->device);
	if (cmd->pid)
		cJSON_AddNumberToObject(o, "pid", (double)cmd->pid);
	if (cmd->lease)
		cJSON_AddNumberToObject(o, "lease", (double)cmd->lease);
	if (cmd->node[0])
		cJSON_AddStringToObject(o, "node", cmd->node);
	if (cmd->id[0])
		cJSON_AddStringToObject(o, "id", cmd->id);
	if (cmd->reply[0])
		cJSON_AddStringToObject(o, "reply", cmd->reply);
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

char *tfs_reply_ok(const char *id, const char *name, const struct tfs_meta *m)
{
	return tfs_meta_json(m, name, id ? id : "");
}

char *tfs_reply_err(const char *id, int err, const char *message)
{
	cJSON *o = cJSON_CreateObject();
	char *s;

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "id", id ? id : "");
	cJSON_AddBoolToObject(o, "ok", 0);
	cJSON_AddStringToObject(o, "error", tfs_errno_name(err));
	cJSON_AddStringToObject(o, "message", message ? message : "");
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

int tfs_reply_parse(const char *json, size_t len, struct tfs_meta *m, char *id_out,
		    size_t idlen, char *msg, size_t msglen)
{
	cJSON *o = cJSON_ParseWithLength(json, len);
	const cJSON *ok, *v;
	int rc = -EBADMSG;

	if (msg && msglen)
		msg[0] = '\0';
	if (!cJSON_IsObject(o))
		goto out;
	if (id_out && idlen) {
		v = cJSON_GetObjectItemCaseSensitive(o, "id");
		snprintf(id_out, idlen, "%s", cJSON_IsString(v) ? v->valuestring : "");
	}
	ok = cJSON_GetObjectItemCaseSensitive(o, "ok");
	if (cJSON_IsTrue(ok)) {
		rc = tfs_meta_from_json(json, len, m);
	} else if (cJSON_IsFalse(ok)) {
		v = cJSON_GetObjectItemCaseSensitive(o, "error");
		rc = -(cJSON_IsString(v) ? tfs_errno_from_name(v->valuestring) : EIO);
		v = cJSON_GetObjectItemCaseSensitive(o, "message");
		if (msg && msglen && cJSON_IsString(v))
			snprintf(msg, msglen, "%s", v->valuestring);
	}
out:
	cJSON_Delete(o);
	return rc;
}
