/* Hugging Face model directories (model_dir.c): which files of a directory are weight
 * shards, which are the small files kept beside them (config, tokenizer, the index), and
 * the index model.safetensors.index.json. Shared by tfs_load and tfs_save; private to
 * libtensorfs. */
#ifndef TFS_MODEL_DIR_H
#define TFS_MODEL_DIR_H

#include <stddef.h>
#include <stdint.h>

#define TFS_MODEL_INDEX "model.safetensors.index.json"
#define TFS_MODEL_SINGLE "model.safetensors"
/* An index larger than this is refused (-EFBIG): real ones are a few MB. */
#define TFS_MODEL_INDEX_MAX (64u << 20)

struct tfs_model_index {
	size_t n;
	char **key;                /* weight_map's keys, sorted by strcmp */
	char **shard;              /* shard[i] holds key[i]; points into shards[] */
	size_t nshards;
	char **shards;             /* distinct shard names, in order of first mention */
};

/* Whether a top-level name is one of the small files a model directory keeps beside its
 * weights: *.json, *.model, *.txt, *.jinja, not hidden. */
int tfs_model_small_name(const char *name);
/* Whether name is a plain file name (no '/', not "." or "..", not empty, not hidden). */
int tfs_model_plain_name(const char *name);

/* Parses an index's text. Every weight_map value must be a plain file name. 0; -EBADMSG
 * with a reason in why (not JSON, no weight_map object, a value not a string, a bad shard
 * name); -ENOMEM. On failure *idx is empty. Release with tfs_model_index_free. */
int tfs_model_index_parse(const char *json, size_t len, struct tfs_model_index *idx,
			  char *why, size_t whylen);
/* The shard of key, or NULL. */
const char *tfs_model_index_find(const struct tfs_model_index *idx, const char *key);
void tfs_model_index_free(struct tfs_model_index *idx);

/* Writes the index of a saved directory: the text of the loaded index (old, may be NULL)
 * with its "metadata" kept, metadata.total_size set to total_size and weight_map replaced
 * by the n (keys[i], shards[i]) pairs; as transformers writes it (sorted keys, indent 2).
 * The malloc'd text (caller frees) into *out; 0, -EBADMSG (old is not a JSON object),
 * -ENOMEM. */
int tfs_model_index_format(const char *old, size_t oldlen, uint64_t total_size, size_t n,
			   char *const *keys, char *const *shards, char **out);

#endif
