/*
 * agent_pull: the agent API (include/hetccl/hetccl_agent.h) in its smallest form -- a decode engine pulls KV
 * blocks from a prefill engine, two processes that share no communicator.
 *
 * The "prefill" process (a forked child here) registers its buffer of KV blocks and hands its metadata blob,
 * with the region id, to the "decode" process (the parent) through a pipe; any channel does (a key-value store,
 * an HTTP side channel, a file). Decode loads the blob, reads every other block into its own buffer with one
 * transfer of strided ranges, followed by a notification that tells prefill it may reuse the blocks; it checks
 * the bytes and prints PASS. Every wait has a deadline.
 *
 * Both agents hold the deployment's shared secret: a fixed one here (options.secret); a deployment sets
 * HETCCL_SECRET (hex) instead and leaves options.secret NULL.
 *
 *   cc -o agent_pull agent_pull.c $(pkg-config --cflags --libs hetccl) && ./agent_pull
 *
 * HETCCL_AGENT_WINDOW=off moves the bytes over the agents' tcp connection instead of shared-memory windows.
 * Exit status 0 and "agent_pull: PASS" when every byte arrived.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hetccl/hetccl.h"
#include "hetccl/hetccl_agent.h"

#define NBLOCKS 16             /* prefill's blocks */
#define NPULL (NBLOCKS / 2)    /* decode pulls blocks 1, 3, 5, ... */
#define BLOCK_BYTES (64 * 1024)
#define DEADLINE_S 60.0

static const char kSecret[] = "agent_pull example secret: 32 B!"; /* 32 bytes */
static const char kDone[] = "blocks pulled";

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int check(hetcclResult_t r, const char* who, const char* what) {
  if (r != hetcclSuccess) {
    fprintf(stderr, "agent_pull %s: %s failed: %s: %s\n", who, what, hetcclGetErrorString(r), hetcclGetLastError(NULL));
    return 0;
  }
  return 1;
}

/* The value of byte i of prefill's block b. */
static unsigned char kv_byte(unsigned b, size_t i) { return (unsigned char)(b * 131u + i * 7u + (i >> 8)); }

static int create_agent(const char* name, hetcclAgent_t* agent) {
  hetcclAgentOptions_t o;
  if (!check(hetcclAgentOptionsInit(&o), name, "hetcclAgentOptionsInit")) return 0;
  o.secret = kSecret;
  o.secretBytes = sizeof kSecret - 1;
  o.listenAddress = "127.0.0.1:0";
  o.timeoutSeconds = 30;
  return check(hetcclAgentCreate(name, &o, agent), name, "hetcclAgentCreate");
}

/* Writes all of buf, or fails. */
static int write_all(int fd, const void* buf, size_t n) {
  const char* p = (const char*)buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return 0;
    p += w;
    n -= (size_t)w;
  }
  return 1;
}

/* Reads exactly n bytes before the deadline, or fails. */
static int read_all(int fd, void* buf, size_t n, double deadline) {
  char* p = (char*)buf;
  while (n > 0) {
    struct pollfd pfd = {fd, POLLIN, 0};
    int left_ms = (int)((deadline - now_s()) * 1000);
    if (left_ms <= 0) return 0;
    int r = poll(&pfd, 1, left_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return 0;
    ssize_t got = read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return 0;
    p += got;
    n -= (size_t)got;
  }
  return 1;
}

/* The child: registers the blocks, sends {region id, blob size, blob} down the pipe, then waits for decode's
 * notification before it lets the blocks go. */
static int prefill(int out) {
  hetcclAgent_t agent;
  if (!create_agent("prefill", &agent)) return 1;
  unsigned char* blocks = malloc((size_t)NBLOCKS * BLOCK_BYTES);
  if (!blocks) return 1;
  for (unsigned b = 0; b < NBLOCKS; ++b)
    for (size_t i = 0; i < BLOCK_BYTES; ++i) blocks[(size_t)b * BLOCK_BYTES + i] = kv_byte(b, i);
  hetcclAgentMem_t mem;
  uint32_t id;
  if (!check(hetcclAgentRegister(agent, blocks, (size_t)NBLOCKS * BLOCK_BYTES, &mem, &id), "prefill", "hetcclAgentRegister"))
    return 1;

  size_t bytes = 0;
  if (!check(hetcclAgentGetMetadata(agent, NULL, &bytes), "prefill", "hetcclAgentGetMetadata")) return 1;
  void* blob = malloc(bytes);
  if (!blob || !check(hetcclAgentGetMetadata(agent, blob, &bytes), "prefill", "hetcclAgentGetMetadata")) return 1;
  uint64_t size = bytes;
  if (!write_all(out, &id, sizeof id) || !write_all(out, &size, sizeof size) || !write_all(out, blob, bytes)) {
    fprintf(stderr, "agent_pull prefill: cannot write the blob to the pipe\n");
    return 1;
  }
  close(out);

  /* Decode's notification: the blocks were read and may be reused. */
  char peer[HETCCL_AGENT_NAME_MAX + 1], msg[HETCCL_AGENT_NOTIF_MAX];
  size_t msgBytes = 0;
  int got = 0;
  const double deadline = now_s() + DEADLINE_S;
  while (!got) {
    if (!check(hetcclAgentGetNotif(agent, peer, msg, sizeof msg, &msgBytes, &got), "prefill", "hetcclAgentGetNotif")) return 1;
    if (!got && now_s() > deadline) {
      fprintf(stderr, "agent_pull prefill: no notification from decode within %.0f s\n", DEADLINE_S);
      return 1;
    }
    if (!got) usleep(1000);
  }
  if (strcmp(peer, "decode") != 0 || msgBytes != sizeof kDone - 1 || memcmp(msg, kDone, msgBytes) != 0) {
    fprintf(stderr, "agent_pull prefill: unexpected notification from '%s'\n", peer);
    return 1;
  }
  printf("agent_pull prefill: decode says '%.*s'\n", (int)msgBytes, msg);
  fflush(stdout);
  if (!check(hetcclAgentDeregister(mem), "prefill", "hetcclAgentDeregister")) return 1;
  if (!check(hetcclAgentDestroy(agent), "prefill", "hetcclAgentDestroy")) return 1;
  free(blob);
  free(blocks);
  return 0;
}

/* The parent: loads prefill's blob, reads blocks 1, 3, 5, ... into its own buffer, notifies, checks. */
static int decode(int in, pid_t child) {
  hetcclAgent_t agent;
  if (!create_agent("decode", &agent)) return 1;
  unsigned char* cache = calloc(NPULL, BLOCK_BYTES);
  if (!cache) return 1;
  hetcclAgentMem_t mem;
  uint32_t localId;
  if (!check(hetcclAgentRegister(agent, cache, (size_t)NPULL * BLOCK_BYTES, &mem, &localId), "decode", "hetcclAgentRegister"))
    return 1;

  const double deadline = now_s() + DEADLINE_S;
  uint32_t remoteId;
  uint64_t size;
  if (!read_all(in, &remoteId, sizeof remoteId, deadline) || !read_all(in, &size, sizeof size, deadline) || size > (1u << 20)) {
    fprintf(stderr, "agent_pull decode: no blob from prefill\n");
    return 1;
  }
  void* blob = malloc(size);
  if (!blob || !read_all(in, blob, size, deadline)) {
    fprintf(stderr, "agent_pull decode: the blob was cut short\n");
    return 1;
  }
  char name[HETCCL_AGENT_NAME_MAX + 1];
  if (!check(hetcclAgentLoadRemote(agent, blob, size, name), "decode", "hetcclAgentLoadRemote")) return 1;

  /* Range i: block 2i+1 of prefill -> slot i of the cache. */
  hetcclAgentRange_t ranges[NPULL];
  if (!check(hetcclAgentStridedRanges(ranges, NPULL, localId, 0, BLOCK_BYTES, remoteId, BLOCK_BYTES, 2 * BLOCK_BYTES,
                                      BLOCK_BYTES),
             "decode", "hetcclAgentStridedRanges"))
    return 1;
  hetcclAgentXfer_t xfer;
  if (!check(hetcclAgentPrepXfer(agent, hetcclAgentRead, name, ranges, NPULL, kDone, sizeof kDone - 1, &xfer), "decode",
             "hetcclAgentPrepXfer") ||
      !check(hetcclAgentPostXfer(xfer), "decode", "hetcclAgentPostXfer"))
    return 1;
  hetcclResult_t r;
  while ((r = hetcclAgentCheckXfer(xfer)) == hetcclInProgress) {
    if (now_s() > deadline) {
      fprintf(stderr, "agent_pull decode: the read did not end within %.0f s\n", DEADLINE_S);
      return 1;
    }
    usleep(100);
  }
  if (!check(r, "decode", "the read")) return 1;

  size_t wrong = 0;
  for (unsigned s = 0; s < NPULL; ++s)
    for (size_t i = 0; i < BLOCK_BYTES; ++i) wrong += cache[(size_t)s * BLOCK_BYTES + i] != kv_byte(2 * s + 1, i);
  if (!check(hetcclAgentReleaseXfer(xfer), "decode", "hetcclAgentReleaseXfer") ||
      !check(hetcclAgentDeregister(mem), "decode", "hetcclAgentDeregister") ||
      !check(hetcclAgentDestroy(agent), "decode", "hetcclAgentDestroy"))
    return 1;

  int status = 0;
  pid_t w;
  while ((w = waitpid(child, &status, WNOHANG)) == 0) {
    if (now_s() > deadline) {
      fprintf(stderr, "agent_pull decode: prefill did not exit\n");
      kill(child, SIGKILL);
      return 1;
    }
    usleep(1000);
  }
  if (w != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "agent_pull decode: prefill failed (status 0x%x)\n", status);
    return 1;
  }
  if (wrong != 0) {
    fprintf(stderr, "agent_pull decode: %zu of %d bytes wrong\n", wrong, NPULL * BLOCK_BYTES);
    return 1;
  }
  printf("agent_pull decode: %d blocks of %d bytes pulled from '%s' with one read\n", NPULL, BLOCK_BYTES, name);
  printf("agent_pull: PASS\n");
  free(blob);
  free(cache);
  return 0;
}

int main(void) {
  int fds[2];
  if (pipe(fds) != 0) {
    perror("pipe");
    return 1;
  }
  fflush(stdout);
  pid_t child = fork(); /* before any agent exists: agents run threads */
  if (child < 0) {
    perror("fork");
    return 1;
  }
  if (child == 0) {
    close(fds[0]);
    _exit(prefill(fds[1]));
  }
  close(fds[1]);
  return decode(fds[0], child);
}
