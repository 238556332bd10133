/* One logging function for the daemon, the library and the tools, with syslog levels.
 * Messages go to stderr until tfs_log_to_syslog() is called (the daemon does so when it
 * goes to the background). Thread-safe. */
#ifndef TFS_LOG_H
#define TFS_LOG_H

#include <syslog.h>

void tfs_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Messages above this level (LOG_DEBUG > LOG_INFO > ...) are dropped. Default LOG_INFO. */
void tfs_log_set_level(int level);
void tfs_log_to_syslog(const char *ident);
const char *tfs_log_level_name(int level);

#endif
