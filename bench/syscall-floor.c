/*
 * The floor under `fslab frag`: the least a program can do to learn every
 * regular file's extents under a tree. Directories are read with
 * getdents64; each regular file costs openat, one FS_IOC_FIEMAP and close,
 * nothing else. Directories are shared out to THREADS workers (default:
 * every core). It prints the files and extents it saw, so a run can be
 * checked against fslab's own totals.
 *
 * Build: gcc -O2 -pthread -o syscall-floor bench/syscall-floor.c
 * Usage: syscall-floor DIR [THREADS]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXTENTS 512

struct queue {
    pthread_mutex_t lock;
    pthread_cond_t more;
    int *fds;
    size_t len, cap;
    int busy; /* workers holding a directory */
    uint64_t files, extents;
};

static struct queue q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0, 0, 0, 0};

static void push(int fd)
{
    pthread_mutex_lock(&q.lock);
    if (q.len == q.cap) {
        q.cap = q.cap ? 2 * q.cap : 256;
        q.fds = realloc(q.fds, q.cap * sizeof *q.fds);
        if (!q.fds) {
            perror("realloc");
            exit(1);
        }
    }
    q.fds[q.len++] = fd;
    pthread_cond_signal(&q.more);
    pthread_mutex_unlock(&q.lock);
}

/* The next directory to read, or -1 when none is left and none is being read. */
static int pop(void)
{
    pthread_mutex_lock(&q.lock);
    while (q.len == 0 && q.busy > 0)
        pthread_cond_wait(&q.more, &q.lock);
    int fd = -1;
    if (q.len > 0) {
        fd = q.fds[--q.len];
        q.busy++;
    } else {
        pthread_cond_broadcast(&q.more);
    }
    pthread_mutex_unlock(&q.lock);
    return fd;
}

static void done(uint64_t files, uint64_t extents)
{
    pthread_mutex_lock(&q.lock);
    q.busy--;
    q.files += files;
    q.extents += extents;
    pthread_cond_broadcast(&q.more);
    pthread_mutex_unlock(&q.lock);
}

static void *worker(void *unused)
{
    (void)unused;
    char buf[64 * 1024];
    size_t size = sizeof(struct fiemap) + EXTENTS * sizeof(struct fiemap_extent);
    struct fiemap *map = malloc(size);
    for (int dir; (dir = pop()) >= 0;) {
        uint64_t files = 0, extents = 0;
        long n;
        while ((n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
            for (long at = 0; at < n;) {
                struct dirent64 *d = (struct dirent64 *)(buf + at);
                at += d->d_reclen;
                if (d->d_type == DT_DIR && strcmp(d->d_name, ".") && strcmp(d->d_name, "..")) {
                    int sub = openat(dir, d->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                    if (sub >= 0)
                        push(sub);
                } else if (d->d_type == DT_REG) {
                    int fd = openat(dir, d->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                    if (fd < 0)
                        continue;
                    uint64_t start = 0;
                    for (;;) {
                        memset(map, 0, sizeof *map);
                        map->fm_start = start;
                        map->fm_length = ~0ULL;
                        map->fm_extent_count = EXTENTS;
                        if (ioctl(fd, FS_IOC_FIEMAP, map) < 0 || map->fm_mapped_extents == 0)
                            break;
                        extents += map->fm_mapped_extents;
                        struct fiemap_extent *last = &map->fm_extents[map->fm_mapped_extents - 1];
                        if (last->fe_flags & FIEMAP_EXTENT_LAST)
                            break;
                        start = last->fe_logical + last->fe_length;
                    }
                    close(fd);
                    files++;
                }
            }
        }
        close(dir);
        done(files, extents);
    }
    free(map);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR [THREADS]\n", argv[0]);
        return 2;
    }
    int threads = argc > 2 ? atoi(argv[2]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1)
        threads = 1;
    int root = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) {
        perror(argv[1]);
        return 2;
    }
    push(root);
    pthread_t *t = calloc(threads, sizeof *t);
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    printf("files %llu extents %llu\n", (unsigned long long)q.files, (unsigned long long)q.extents);
    return 0;
}
