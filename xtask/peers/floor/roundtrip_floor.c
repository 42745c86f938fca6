/*
 * fix-roundtrip-floor: the one-at-a-time round trip of `perfkit fix bench`'s
 * session part with no FIX work, so the bench can say how far perfkit <->
 * perfkit sits from what this machine's loopback and wake-ups allow.
 *
 * One process (this one) is the initiator; a child it forks is the
 * acceptor, on one loopback TCP connection with TCP_NODELAY on both ends,
 * as the bench's engines are. Per order:
 *   - the initiator writes an order (as long as perfkit's NewOrderSingle)
 *     in one write, then waits for the socket as perfkit's initiator does:
 *     poll with a zero timeout in a loop for up to --spin nanoseconds, then
 *     poll blocking; then recv. The round trip is timed from just before the
 *     write to the moment the first answer is whole;
 *   - the acceptor waits in a blocking poll, reads the order, and answers
 *     with two messages (as long as perfkit's ExecutionReport: new, then
 *     filled, as `fix acceptor --app exec` does) in one write, as perfkit's
 *     engine sends a round.
 * The initiator reads the second answer before sending the next order.
 *
 * Usage (every value required, sizes in bytes, times in nanoseconds):
 *   fix-roundtrip-floor --orders N --order-bytes B --answer-bytes A
 *                       --spin NS --latencies FILE
 * Writes each round trip in nanoseconds to FILE, one per line, and prints
 * "answered N" on success. Errors go to stderr with exit status 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_MESSAGE (1 << 20)

static void die(const char *what) {
    fprintf(stderr, "fix-roundtrip-floor: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void fail(const char *what) {
    fprintf(stderr, "fix-roundtrip-floor: %s\n", what);
    exit(1);
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* FIX-looking bytes ending in a line break, so a capture reads sensibly. */
static void fill_message(char *p, uint64_t len) {
    static const char pattern[] = "8=FIX.4.4\x01" "35=8\x01" "55=IBM\x01" "38=100\x01";
    for (uint64_t i = 0; i < len; i++) p[i] = pattern[i % (sizeof pattern - 1)];
    p[len - 1] = '\n';
}

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            die("write");
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Waits until fd is readable: polling without blocking for up to spin_ns
 * first, as perfkit's connection does with --spin, then blocking. */
static void wait_readable(int fd, uint64_t spin_ns) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (spin_ns > 0) {
        uint64_t until = now_ns() + spin_ns;
        for (;;) {
            p.revents = 0;
            int n = poll(&p, 1, 0);
            if (n < 0 && errno != EINTR) die("poll");
            if (n > 0) return;
            if (now_ns() >= until) break;
            __builtin_ia32_pause();
        }
    }
    for (;;) {
        p.revents = 0;
        int n = poll(&p, 1, -1);
        if (n > 0) return;
        if (n < 0 && errno != EINTR) die("poll");
    }
}

/* Reads exactly n bytes, waiting as wait_readable does; 0 at a clean end
 * before the first byte, 1 once all n are in. */
static int read_exactly(int fd, char *p, size_t n, uint64_t spin_ns) {
    size_t got = 0;
    while (got < n) {
        wait_readable(fd, spin_ns);
        ssize_t r = recv(fd, p + got, n - got, 0);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            die("recv");
        }
        if (r == 0) {
            if (got == 0) return 0;
            fail("the connection ended inside a message");
        }
        got += (size_t)r;
    }
    return 1;
}

static void nodelay(int fd) {
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) die("TCP_NODELAY");
}

/* The acceptor: answers each order with two answers in one write until the
 * initiator closes. */
static void acceptor(int listener, uint64_t order_bytes, uint64_t answer_bytes) {
    int fd = accept(listener, NULL, NULL);
    if (fd < 0) die("accept");
    close(listener);
    nodelay(fd);
    char *order = malloc(order_bytes);
    char *answers = malloc(2 * answer_bytes);
    if (!order || !answers) fail("out of memory");
    fill_message(answers, answer_bytes);
    fill_message(answers + answer_bytes, answer_bytes);
    while (read_exactly(fd, order, order_bytes, 0)) write_all(fd, answers, 2 * answer_bytes);
    _exit(0);
}

static uint64_t number(const char *flag, const char *v) {
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0') {
        fprintf(stderr, "fix-roundtrip-floor: %s: not a number: %s\n", flag, v);
        exit(2);
    }
    return (uint64_t)n;
}

int main(int argc, char **argv) {
    uint64_t orders = 0, order_bytes = 0, answer_bytes = 0, spin_ns = 0;
    const char *latencies = NULL;
    int have = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *f = argv[i], *v = argv[i + 1];
        if (!strcmp(f, "--orders")) orders = number(f, v), have |= 1;
        else if (!strcmp(f, "--order-bytes")) order_bytes = number(f, v), have |= 2;
        else if (!strcmp(f, "--answer-bytes")) answer_bytes = number(f, v), have |= 4;
        else if (!strcmp(f, "--spin")) spin_ns = number(f, v), have |= 8;
        else if (!strcmp(f, "--latencies")) latencies = v, have |= 16;
        else have = -1;
    }
    if (have != 31 || argc % 2 != 1 || orders == 0 || order_bytes < 2 || answer_bytes < 2 ||
        order_bytes > MAX_MESSAGE || answer_bytes > MAX_MESSAGE) {
        fprintf(stderr,
                "usage: fix-roundtrip-floor --orders N --order-bytes B --answer-bytes A "
                "--spin NS --latencies FILE (sizes 2 to %d bytes)\n",
                MAX_MESSAGE);
        return 2;
    }
    /* One time per order is kept: a count whose times would not fit the
     * address space must not wrap the size asked for. */
    if (orders > SIZE_MAX / sizeof(uint64_t)) fail("--orders: too many to keep a time for each");
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    if (listener < 0) die("socket");
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    if (bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0) die("bind");
    if (listen(listener, 1) != 0) die("listen");
    if (getsockname(listener, (struct sockaddr *)&addr, &len) != 0) die("getsockname");
    pid_t child = fork();
    if (child < 0) die("fork");
    if (child == 0) {
        /* The acceptor must not outlive a killed initiator. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        acceptor(listener, order_bytes, answer_bytes);
    }
    close(listener);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) die("socket");
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) die("connect");
    nodelay(fd);
    char *order = malloc(order_bytes);
    char *answer = malloc(answer_bytes);
    uint64_t *rtt = malloc(orders * sizeof *rtt);
    if (!order || !answer || !rtt) fail("out of memory");
    fill_message(order, order_bytes);
    for (uint64_t i = 0; i < orders; i++) {
        uint64_t t0 = now_ns();
        write_all(fd, order, order_bytes);
        if (!read_exactly(fd, answer, answer_bytes, spin_ns)) fail("the acceptor closed");
        rtt[i] = now_ns() - t0;
        if (!read_exactly(fd, answer, answer_bytes, spin_ns)) fail("the acceptor closed");
    }
    close(fd);
    int status = 0;
    if (waitpid(child, &status, 0) < 0) die("waitpid");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail("the acceptor failed");
    FILE *out = fopen(latencies, "w");
    if (!out) die(latencies);
    for (uint64_t i = 0; i < orders; i++) fprintf(out, "%llu\n", (unsigned long long)rtt[i]);
    if (fclose(out) != 0) die(latencies);
    printf("answered %llu\n", (unsigned long long)orders);
    return 0;
}
