/* tensorfs.h — the installed header of libtensorfs.
 *
 * Conventions: every function that can fail returns 0 (or a count) on success and a
 * negative errno value on failure; none aborts the calling process. Objects are opaque
 * and released by the matching close/free function named beside them.
 */
#ifndef TENSORFS_H
#define TENSORFS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TFS_VERSION_MAJOR 0
#define TFS_VERSION_MINOR 1

/* Most dimensions a tensor may have (numpy allows 64; DLPack any; 16 covers real models). */
#define TFS_MAX_DIMS 16
/* Size of the raw handle in user.tensor.ipc_handle: a cudaIpcMemHandle_t, or the host
 * backend's shared-memory name (see README, "IPC handles"). */
#define TFS_IPC_HANDLE_SIZE 64

typedef enum tfs_dtype {
	TFS_BOOL, TFS_U8, TFS_I8, TFS_U16, TFS_I16, TFS_U32, TFS_I32, TFS_U64, TFS_I64,
	TFS_F16, TFS_BF16, TFS_F32, TFS_F64, TFS_F8E4M3, TFS_F8E5M2,
	TFS_DTYPE_COUNT
} tfs_dtype;

#ifdef __cplusplus
}
#endif
#endif
