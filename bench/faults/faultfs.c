// An LD_PRELOAD shim that makes the file system fail on purpose, for bench/faults/run.
//
//   FAULT_PATH   substring of the paths to fail (files opened after start-up)
//   FAULT        eio-read     read/pread of a matching file fails with EIO once FAULT_AFTER
//                             bytes of it have been read (0: the first read fails)
//                enospc-write write/pwrite to a matching file fails with ENOSPC
//                enoent-open  opening a matching file fails with ENOENT (vanished after indexing)
//                eacces-open  opening a matching path (file or folder) fails with EACCES
//                hang-read    read/pread of a matching file sleeps FAULT_HANG_MS (default 60000) first
//   FAULT_ARM    a file whose existence arms the fault (absent: armed from the start), so the
//                server can index a tree cleanly and the fault then hits its requests only
//
// Build: clang -shared -fPIC -O2 -o faultfs.so faultfs.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>
#include <dirent.h>

#define MAX_FD 65536
static unsigned char s_matched[MAX_FD];
static long long s_readSoFar[MAX_FD];
// The file each matched descriptor was opened on: a descriptor number is reused once closed,
// and a close made inside libc (fclose) does not pass through this shim, so a read checks that
// its descriptor still names that file. Without the check, a later /proc read by the runtime
// that landed on a reused number failed with EIO, and the runtime aborted ("Out of memory").
static dev_t s_device[MAX_FD];
static ino_t s_inode[MAX_FD];

static const char *env(const char *name) { const char *v = getenv(name); return v && *v ? v : NULL; }

static int armed(void)
{
    const char *arm = env("FAULT_ARM");
    struct stat st;
    static int (*real_stat)(const char *, struct stat *);
    if (!arm) return 1;
    if (!real_stat) real_stat = dlsym(RTLD_NEXT, "stat");
    return real_stat ? real_stat(arm, &st) == 0 : 1;
}

static int matches(const char *path)
{
    const char *want = env("FAULT_PATH");
    return want && path && strstr(path, want) != NULL;
}

static int is(const char *fault) { const char *f = env("FAULT"); return f && strcmp(f, fault) == 0; }

static void remember(int fd, const char *path)
{
    struct stat st;
    if (fd < 0 || fd >= MAX_FD) return;
    s_matched[fd] = matches(path) && fstat(fd, &st) == 0;
    s_readSoFar[fd] = 0;
    if (s_matched[fd]) { s_device[fd] = st.st_dev; s_inode[fd] = st.st_ino; }
}

static int still_matched(int fd)
{
    struct stat st;
    if (fd < 0 || fd >= MAX_FD || !s_matched[fd]) return 0;
    if (fstat(fd, &st) == 0 && st.st_dev == s_device[fd] && st.st_ino == s_inode[fd]) return 1;
    s_matched[fd] = 0;
    return 0;
}

int close(int fd)
{
    static int (*real)(int);
    if (!real) real = dlsym(RTLD_NEXT, "close");
    if (fd >= 0 && fd < MAX_FD) s_matched[fd] = 0;
    return real(fd);
}

static int refuse_open(const char *path)
{
    if (!matches(path) || !armed()) return 0;
    if (is("enoent-open")) { errno = ENOENT; return 1; }
    if (is("eacces-open")) { errno = EACCES; return 1; }
    return 0;
}

static int mode_of(int flags, va_list ap) { return (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, int) : 0; }

int open(const char *path, int flags, ...)
{
    static int (*real)(const char *, int, ...);
    va_list ap; va_start(ap, flags); int mode = mode_of(flags, ap); va_end(ap);
    if (!real) real = dlsym(RTLD_NEXT, "open");
    if (refuse_open(path)) return -1;
    int fd = real(path, flags, mode); remember(fd, path); return fd;
}

int open64(const char *path, int flags, ...)
{
    static int (*real)(const char *, int, ...);
    va_list ap; va_start(ap, flags); int mode = mode_of(flags, ap); va_end(ap);
    if (!real) real = dlsym(RTLD_NEXT, "open64");
    if (refuse_open(path)) return -1;
    int fd = real(path, flags, mode); remember(fd, path); return fd;
}

int openat(int dir, const char *path, int flags, ...)
{
    static int (*real)(int, const char *, int, ...);
    va_list ap; va_start(ap, flags); int mode = mode_of(flags, ap); va_end(ap);
    if (!real) real = dlsym(RTLD_NEXT, "openat");
    if (refuse_open(path)) return -1;
    int fd = real(dir, path, flags, mode); remember(fd, path); return fd;
}

DIR *opendir(const char *path)
{
    static DIR *(*real)(const char *);
    if (!real) real = dlsym(RTLD_NEXT, "opendir");
    if (refuse_open(path)) return NULL;
    return real(path);
}

static int fail_read(int fd, size_t count)
{
    if (!still_matched(fd) || !armed()) return 0;
    if (is("hang-read"))
    {
        const char *ms = env("FAULT_HANG_MS");
        long wait = ms ? atol(ms) : 60000;
        struct timespec t = { wait / 1000, (wait % 1000) * 1000000L };
        nanosleep(&t, NULL);
        return 0;
    }

    if (is("eio-read"))
    {
        const char *after = env("FAULT_AFTER");
        if (s_readSoFar[fd] >= (after ? atoll(after) : 0)) { errno = EIO; return 1; }
        s_readSoFar[fd] += (long long)count;
    }

    return 0;
}

ssize_t read(int fd, void *buf, size_t count)
{
    static ssize_t (*real)(int, void *, size_t);
    if (!real) real = dlsym(RTLD_NEXT, "read");
    if (fail_read(fd, count)) return -1;
    return real(fd, buf, count);
}

ssize_t pread(int fd, void *buf, size_t count, off_t offset)
{
    static ssize_t (*real)(int, void *, size_t, off_t);
    if (!real) real = dlsym(RTLD_NEXT, "pread");
    if (fail_read(fd, count)) return -1;
    return real(fd, buf, count, offset);
}

ssize_t pread64(int fd, void *buf, size_t count, off_t offset)
{
    static ssize_t (*real)(int, void *, size_t, off_t);
    if (!real) real = dlsym(RTLD_NEXT, "pread64");
    if (fail_read(fd, count)) return -1;
    return real(fd, buf, count, offset);
}

static int fail_write(int fd)
{
    if (!still_matched(fd) || !armed() || !is("enospc-write")) return 0;
    errno = ENOSPC;
    return 1;
}

ssize_t write(int fd, const void *buf, size_t count)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = dlsym(RTLD_NEXT, "write");
    if (fail_write(fd)) return -1;
    return real(fd, buf, count);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset)
{
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (!real) real = dlsym(RTLD_NEXT, "pwrite");
    if (fail_write(fd)) return -1;
    return real(fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset)
{
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (!real) real = dlsym(RTLD_NEXT, "pwrite64");
    if (fail_write(fd)) return -1;
    return real(fd, buf, count, offset);
}
