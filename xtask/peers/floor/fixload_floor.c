/*
 * fixload-floor: the I/O of perfkit's FIX load generator with no FIX work,
 * so `perfkit fix load` can print its own CPU per order as a ratio to what
 * the same traffic costs at least.
 *
 * One process (this one) holds K loopback TCP connections and runs two
 * threads, as the generator does:
 *   - a sender that wakes every coalescing window with
 *     clock_nanosleep(TIMER_ABSTIME) and writes the orders due since its
 *     last round to each connection, one write per connection, from bytes
 *     built once (each as long as the generator's NewOrderSingle);
 *   - a receiver in poll + read over every connection, counting answers.
 * A forked child answers each order with two messages of the generator's
 * ExecutionReport size (new, then filled, as `fix acceptor --app exec`
 * does), a thread per connection as FIX engines serve sessions. Its CPU is not counted: the figure is getrusage(RUSAGE_SELF) of
 * this process over the measured part, which covers this process's threads
 * only.
 *
 * Orders follow the generator's schedule: order g of the run (the sessions
 * take turns, session j sending g = j, K + j, ...) is due g / rate seconds
 * after the start; a round sends every order due by its wake, and the next
 * round is no sooner than a coalescing window after it.
 *
 * Usage (every value required, times in nanoseconds):
 *   fixload-floor --rate R --sessions K --coalesce NS --warmup NS
 *                 --duration NS --grace NS --order-bytes B --answer-bytes A
 *                 [--pin-send CORE --pin-recv CORE]
 * Prints one line on success:
 *   sent=N answered=N cpu_ns=N measured_ns=N send_rounds=N recv_wakes=N
 * where sent counts the orders due in the measured part and cpu_ns is this
 * process's CPU from the measured part's start until its last order went
 * out. Errors go to stderr with exit status 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SESSIONS 4096
#define MAX_MESSAGE (1 << 20)
/* Most orders written per connection per round, as the generator's BATCH. */
#define BATCH 256
#define READ_BUF (256 << 10)

static double rate;
static uint64_t sessions, coalesce_ns, warmup_ns, duration_ns, grace_ns;
static uint64_t order_bytes, answer_bytes;
static long pin_send = -1, pin_recv = -1;

static int conns[MAX_SESSIONS];
static uint64_t start_ns, measure_from_ns, end_ns;

/* Set by the sender, read by the receiver and the main thread. */
static atomic_uint_fast64_t answered_total;
static atomic_int sender_done;
static atomic_int receiver_stop;

/* The sender's results. */
static uint64_t sent_measured, send_rounds, last_send_ns;
static uint64_t recv_wakes;

static void die(const char *what) {
    fprintf(stderr, "fixload-floor: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void fail(const char *what) {
    fprintf(stderr, "fixload-floor: %s\n", what);
    exit(1);
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void sleep_until(uint64_t at) {
    struct timespec t = {.tv_sec = (time_t)(at / 1000000000ull),
                         .tv_nsec = (long)(at % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {
    }
}

static uint64_t cpu_ns(void) {
    struct rusage u;
    if (getrusage(RUSAGE_SELF, &u) != 0)
        die("getrusage");
    return (uint64_t)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000000ull +
           (uint64_t)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1000ull;
}

static void pin(long core) {
    if (core < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((int)core, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        die("pinning a thread");
}

/* When order g is due: g / rate seconds after the start. */
static uint64_t due(uint64_t g) {
    return start_ns + (uint64_t)((double)g / rate * 1e9);
}

/* Orders due before `at` (and before the schedule's end): 0 .. n-1. */
static uint64_t due_by(uint64_t at, uint64_t total) {
    if (at < start_ns)
        return 0;
    uint64_t n = (uint64_t)((double)(at - start_ns) * rate / 1e9) + 1;
    while (n > 0 && due(n - 1) > at)
        n--;
    while (n < total && due(n) <= at)
        n++;
    return n < total ? n : total;
}

/* A FIX-looking message of exactly `len` bytes: 8=FIX.4.4, a body of
 * filler, and a trailing SOH. Only its length matters to either side. */
static void fill_message(char *p, uint64_t len) {
    static const char head[] = "8=FIX.4.4\0019=";
    uint64_t i = 0;
    for (; i < len && i < sizeof head - 1; i++)
        p[i] = head[i];
    for (; i < len; i++)
        p[i] = (char)('0' + i % 10);
    p[len - 1] = '\001';
}

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            die("writing");
        }
        p += w;
        n -= (size_t)w;
    }
}

static void *sender(void *arg) {
    (void)arg;
    pin(pin_send);
    /* The generator's sender asks for the same timer slack. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    uint64_t total = (uint64_t)((double)(end_ns - start_ns) * rate / 1e9) + 2;
    while (total > 0 && due(total - 1) >= end_ns)
        total--;
    char *orders = malloc(BATCH * order_bytes);
    if (!orders)
        fail("out of memory");
    for (uint64_t i = 0; i < BATCH; i++)
        fill_message(orders + i * order_bytes, order_bytes);
    uint64_t next = 0; /* the first order not yet sent */
    uint64_t last_round = 0;
    while (next < total) {
        uint64_t wake = due(next);
        if (last_round && wake < last_round + coalesce_ns)
            wake = last_round + coalesce_ns;
        uint64_t before = now_ns();
        if (wake > before)
            sleep_until(wake);
        uint64_t at = now_ns();
        last_round = at;
        int measured = at >= measure_from_ns && at < end_ns;
        if (measured)
            send_rounds++;
        /* Orders next .. upto-1, session j taking g % K == j: at most
         * BATCH per session per round, as the generator. */
        uint64_t upto = due_by(at, total);
        if (upto - next > BATCH * sessions)
            upto = next + BATCH * sessions;
        uint64_t n = upto - next;
        for (uint64_t j = 0; j < sessions; j++) {
            uint64_t first = next + (j + sessions - next % sessions) % sessions;
            uint64_t count = first < upto ? (upto - first + sessions - 1) / sessions : 0;
            if (count)
                write_all(conns[j], orders, count * order_bytes);
        }
        for (uint64_t g = next; g < next + n; g++) {
            uint64_t d = due(g);
            if (d >= measure_from_ns && d < end_ns) {
                sent_measured++;
                last_send_ns = at;
            }
        }
        next += n;
    }
    free(orders);
    atomic_store(&sender_done, 1);
    return NULL;
}

static void *receiver(void *arg) {
    (void)arg;
    pin(pin_recv);
    char *buf = malloc(READ_BUF);
    uint64_t *pending = calloc(sessions, sizeof *pending);
    struct pollfd *fds = calloc(sessions, sizeof *fds);
    if (!buf || !pending || !fds)
        fail("out of memory");
    uint64_t answer_pair = 2 * answer_bytes;
    uint64_t open = sessions;
    for (uint64_t j = 0; j < sessions; j++) {
        fds[j].fd = conns[j];
        fds[j].events = POLLIN;
    }
    while (open > 0 && !atomic_load(&receiver_stop)) {
        int r = poll(fds, sessions, 100);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            die("poll");
        }
        if (r == 0)
            continue;
        uint64_t at = now_ns();
        if (at >= measure_from_ns && at < end_ns)
            recv_wakes++;
        for (uint64_t j = 0; j < sessions; j++) {
            if (!fds[j].revents)
                continue;
            ssize_t got = recv(fds[j].fd, buf, READ_BUF, MSG_DONTWAIT);
            if (got < 0) {
                if (errno == EAGAIN || errno == EINTR)
                    continue;
                die("reading");
            }
            if (got == 0) {
                fds[j].fd = -1;
                open--;
                continue;
            }
            pending[j] += (uint64_t)got;
            uint64_t orders = pending[j] / answer_pair;
            pending[j] -= orders * answer_pair;
            atomic_fetch_add(&answered_total, orders);
        }
    }
    free(buf);
    free(pending);
    free(fds);
    return NULL;
}

/* The counterparty's answers, built once: two per order, for the most
 * orders one read can bring. */
static char *answers;

/* One connection of the counterparty: answers each order with two
 * messages of answer_bytes, one write per read, until end of stream. */
static void *answer_one(void *arg) {
    int fd = (int)(intptr_t)arg;
    char *buf = malloc(READ_BUF);
    if (!buf)
        fail("out of memory");
    uint64_t pending = 0;
    for (;;) {
        ssize_t got = recv(fd, buf, READ_BUF, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        pending += (uint64_t)got;
        uint64_t orders = pending / order_bytes;
        pending -= orders * order_bytes;
        if (orders)
            write_all(fd, answers, orders * 2 * answer_bytes);
    }
    close(fd);
    free(buf);
    return NULL;
}

/* The counterparty: a thread per connection, as FIX engines serve
 * sessions (fixcore's acceptor and QuickFIX's threaded one both do), so
 * the wake-ups the sender's writes cause are the same kind as an engine's.
 * Ends when every connection has ended. */
static void answer(int port) {
    static int fds[MAX_SESSIONS];
    static pthread_t threads[MAX_SESSIONS];
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    uint64_t max_orders = READ_BUF / order_bytes + 1;
    answers = malloc(max_orders * 2 * answer_bytes);
    if (!answers)
        fail("out of memory");
    for (uint64_t i = 0; i < 2 * max_orders; i++)
        fill_message(answers + i * answer_bytes, answer_bytes);
    for (uint64_t j = 0; j < sessions; j++) {
        fds[j] = socket(AF_INET, SOCK_STREAM, 0);
        if (fds[j] < 0 || connect(fds[j], (struct sockaddr *)&a, sizeof a) != 0)
            die("the answering peer connecting");
        int one = 1;
        setsockopt(fds[j], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    for (uint64_t j = 0; j < sessions; j++)
        if (pthread_create(&threads[j], NULL, answer_one, (void *)(intptr_t)fds[j]))
            fail("starting the answering peer's threads");
    for (uint64_t j = 0; j < sessions; j++)
        pthread_join(threads[j], NULL);
    _exit(0);
}

static uint64_t number(const char *flag, const char *v) {
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || *end || !*v || v[0] == '-') {
        fprintf(stderr, "fixload-floor: %s %s: not a number\n", flag, v);
        exit(1);
    }
    return (uint64_t)n;
}

int main(int argc, char **argv) {
    int have = 0;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc) {
            fprintf(stderr, "fixload-floor: %s needs a value\n", argv[i]);
            return 1;
        }
        const char *f = argv[i], *v = argv[i + 1];
        if (!strcmp(f, "--rate")) {
            char *end;
            rate = strtod(v, &end);
            if (*end || !(rate >= 1.0 && rate <= 1e8))
                fail("--rate: orders per second, 1 to 100M");
            have |= 1;
        } else if (!strcmp(f, "--sessions")) {
            sessions = number(f, v);
            have |= 2;
        } else if (!strcmp(f, "--coalesce")) {
            coalesce_ns = number(f, v);
            have |= 4;
        } else if (!strcmp(f, "--warmup")) {
            warmup_ns = number(f, v);
            have |= 8;
        } else if (!strcmp(f, "--duration")) {
            duration_ns = number(f, v);
            have |= 16;
        } else if (!strcmp(f, "--grace")) {
            grace_ns = number(f, v);
            have |= 32;
        } else if (!strcmp(f, "--order-bytes")) {
            order_bytes = number(f, v);
            have |= 64;
        } else if (!strcmp(f, "--answer-bytes")) {
            answer_bytes = number(f, v);
            have |= 128;
        } else if (!strcmp(f, "--pin-send")) {
            pin_send = (long)number(f, v);
        } else if (!strcmp(f, "--pin-recv")) {
            pin_recv = (long)number(f, v);
        } else {
            fprintf(stderr, "fixload-floor: unknown flag %s\n", f);
            return 1;
        }
    }
    if (have != 255)
        fail("usage: fixload-floor --rate R --sessions K --coalesce NS --warmup NS "
             "--duration NS --grace NS --order-bytes B --answer-bytes A "
             "[--pin-send CORE --pin-recv CORE]");
    if (sessions < 1 || sessions > MAX_SESSIONS)
        fail("--sessions: 1 to 4096");
    if (order_bytes < 16 || order_bytes > MAX_MESSAGE || answer_bytes < 16 ||
        answer_bytes > MAX_MESSAGE)
        fail("--order-bytes and --answer-bytes: 16 to 1048576");
    if (duration_ns == 0 || coalesce_ns > 10000000ull)
        fail("--duration over zero, --coalesce at most 10 ms");

    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    if (listener < 0 || bind(listener, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(listener, (int)sessions) != 0 ||
        getsockname(listener, (struct sockaddr *)&a, &alen) != 0)
        die("listening on loopback");
    int port = ntohs(a.sin_port);
    pid_t child = fork();
    if (child < 0)
        die("fork");
    if (child == 0) {
        close(listener);
        answer(port);
    }
    for (uint64_t j = 0; j < sessions; j++) {
        conns[j] = accept(listener, NULL, NULL);
        if (conns[j] < 0)
            die("accepting the answering peer");
        int one = 1;
        setsockopt(conns[j], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    close(listener);

    start_ns = now_ns() + 10000000ull;
    measure_from_ns = start_ns + warmup_ns;
    end_ns = measure_from_ns + duration_ns;
    pthread_t s, r;
    if (pthread_create(&r, NULL, receiver, NULL) || pthread_create(&s, NULL, sender, NULL))
        fail("starting the threads");
    /* CPU from the measured part's start to the sender's end, as the
     * generator reads its process clock. */
    sleep_until(measure_from_ns);
    uint64_t cpu0 = cpu_ns();
    pthread_join(s, NULL);
    uint64_t cpu1 = cpu_ns();
    /* Every order sent, answered within the grace period. */
    uint64_t sent_all = 0;
    {
        uint64_t total = (uint64_t)((double)(end_ns - start_ns) * rate / 1e9) + 2;
        while (total > 0 && due(total - 1) >= end_ns)
            total--;
        sent_all = total;
    }
    uint64_t deadline = now_ns() + grace_ns;
    while (atomic_load(&answered_total) < sent_all && now_ns() < deadline)
        usleep(1000);
    for (uint64_t j = 0; j < sessions; j++)
        shutdown(conns[j], SHUT_WR);
    deadline = now_ns() + 2000000000ull;
    while (now_ns() < deadline) {
        int st;
        pid_t w = waitpid(child, &st, WNOHANG);
        if (w == child)
            break;
        usleep(1000);
    }
    atomic_store(&receiver_stop, 1);
    pthread_join(r, NULL);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    uint64_t measured = (last_send_ns > end_ns ? last_send_ns : end_ns) - measure_from_ns;
    uint64_t answered = atomic_load(&answered_total);
    printf("sent=%llu answered=%llu of=%llu cpu_ns=%llu measured_ns=%llu send_rounds=%llu "
           "recv_wakes=%llu\n",
           (unsigned long long)sent_measured, (unsigned long long)answered,
           (unsigned long long)sent_all, (unsigned long long)(cpu1 - cpu0),
           (unsigned long long)measured, (unsigned long long)send_rounds,
           (unsigned long long)recv_wakes);
    return answered == sent_all ? 0 : 1;
}
