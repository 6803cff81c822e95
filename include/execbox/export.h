/* Symbol visibility for libexecbox. The library is built with
 * -fvisibility=hidden; only declarations marked EB_EXPORT are public. */
#ifndef EXECBOX_EXPORT_H
#define EXECBOX_EXPORT_H

#define EB_EXPORT __attribute__((visibility("default")))

#if defined(__GNUC__) || defined(__clang__)
#define EB_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define EB_PRINTF(fmt_index, first_arg)
#endif

#endif
