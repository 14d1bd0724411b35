// Both-ways tag bandwidth between two processes; endpoints via CM listener or worker address; err mode.
// usage: ucx_bidir server|client HOST PORT SIZE ITERS CM(0/1) ERR(0/1) HDR(0/1) WINDOW
#include <ucp/api/ucp.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static ucp_context_h ctx; static ucp_worker_h w; static ucp_ep_h ep; static volatile ucp_conn_request_h creq;
static int errmode;
static void on_conn(ucp_conn_request_h r, void* a) { (void)a; creq = r; }
static void noop_send(void* r, ucs_status_t s, void* u) { (void)r; (void)s; (*(int*)u)++; }
static void noop_recv(void* r, ucs_status_t s, const ucp_tag_recv_info_t* i, void* u) { (void)r; (void)s; (void)i; (*(int*)u)++; }
static double now() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int oob(int server, const char* host, int port) {  // plain tcp socket for address exchange
  int s = socket(AF_INET, SOCK_STREAM, 0), one = 1; struct sockaddr_in a = {0};
  a.sin_family = AF_INET; a.sin_port = htons(port); inet_pton(AF_INET, host, &a.sin_addr);
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (server) { bind(s, (void*)&a, sizeof a); listen(s, 1); int c = accept(s, NULL, NULL); close(s); return c; }
  while (connect(s, (void*)&a, sizeof a) != 0) usleep(10000);
  return s;
}
static void wait_req(void* r) { if (UCS_PTR_IS_ERR(r)) { printf("err %s\n", ucs_status_string(UCS_PTR_STATUS(r))); exit(1); }
  if (!r) return; while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(w); ucp_request_free(r); }
int main(int argc, char** argv) {
  int server = !strcmp(argv[1], "server"); const char* host = argv[2]; int port = atoi(argv[3]);
  size_t size = strtoull(argv[4], 0, 0); int iters = atoi(argv[5]), cm = atoi(argv[6]); errmode = atoi(argv[7]);
  int hdr = atoi(argv[8]), win = atoi(argv[9]);
  int two = argc > 10 ? atoi(argv[10]) : 0;
  ucp_params_t p = {0}; p.field_mask = UCP_PARAM_FIELD_FEATURES; p.features = UCP_FEATURE_TAG | UCP_FEATURE_STREAM;
  ucp_init(&p, NULL, &ctx);
  ucp_worker_params_t wp = {0}; wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE; wp.thread_mode = UCS_THREAD_MODE_SINGLE;
  ucp_worker_create(ctx, &wp, &w);
  ucp_ep_params_t ep_p = {0};
  ep_p.field_mask = UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE; ep_p.err_mode = errmode ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
  if (two) {  // each side: a listener of its own and an endpoint to the other's; sends go on its own endpoint
    struct sockaddr_in mine = {0}, other = {0};
    mine.sin_family = other.sin_family = AF_INET;
    mine.sin_port = htons(port + (server ? 0 : 1)); other.sin_port = htons(port + (server ? 1 : 0));
    inet_pton(AF_INET, host, &mine.sin_addr); inet_pton(AF_INET, host, &other.sin_addr);
    ucp_listener_params_t lp = {0}; ucp_listener_h l;
    lp.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
    lp.sockaddr.addr = (void*)&mine; lp.sockaddr.addrlen = sizeof mine; lp.conn_handler.cb = on_conn;
    if (ucp_listener_create(w, &lp, &l) != UCS_OK) { puts("listen failed"); return 1; }
    usleep(1000000);
    ep_p.field_mask |= UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR; ep_p.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
    ep_p.sockaddr.addr = (void*)&other; ep_p.sockaddr.addrlen = sizeof other;
    if (ucp_ep_create(w, &ep_p, &ep) != UCS_OK) { puts("ep failed"); return 1; }
    while (!creq) ucp_worker_progress(w);
    ucp_ep_params_t ap = {0}; ucp_ep_h back;
    ap.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE; ap.conn_request = creq;
    ap.err_mode = ep_p.err_mode;
    if (ucp_ep_create(w, &ap, &back) != UCS_OK) { puts("accept failed"); return 1; }
    // a ping on each endpoint so that both are wired up before timing
    char ping = 1, pong = 0; ucp_request_param_t z = {0};
    wait_req(ucp_tag_send_nbx(ep, &ping, 1, 99999, &z)); wait_req(ucp_tag_recv_nbx(w, &pong, 1, 99999, ~0ull, &z));
  } else if (cm) {
    struct sockaddr_in a = {0}; a.sin_family = AF_INET; a.sin_port = htons(port); inet_pton(AF_INET, host, &a.sin_addr);
    if (server) {
      ucp_listener_params_t lp = {0}; ucp_listener_h l;
      lp.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
      lp.sockaddr.addr = (void*)&a; lp.sockaddr.addrlen = sizeof a; lp.conn_handler.cb = on_conn;
      if (ucp_listener_create(w, &lp, &l) != UCS_OK) { puts("listen failed"); return 1; }
      while (!creq) ucp_worker_progress(w);
      ep_p.field_mask |= UCP_EP_PARAM_FIELD_CONN_REQUEST; ep_p.conn_request = creq;
    } else {
      ep_p.field_mask |= UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR; ep_p.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
      ep_p.sockaddr.addr = (void*)&a; ep_p.sockaddr.addrlen = sizeof a;
    }
  } else {
    ucp_address_t* addr; size_t len; ucp_worker_get_address(w, &addr, &len);
    int s = oob(server, host, port); size_t plen; write(s, &len, sizeof len); write(s, addr, len);
    read(s, &plen, sizeof plen); void* peer = malloc(plen); size_t got = 0; while (got < plen) got += read(s, (char*)peer + got, plen - got);
    close(s);
    ep_p.field_mask |= UCP_EP_PARAM_FIELD_REMOTE_ADDRESS; ep_p.address = peer;
  }
  if (!two && ucp_ep_create(w, &ep_p, &ep) != UCS_OK) { puts("ep failed"); return 1; }
  char* sbuf = malloc(size); char* rbuf = malloc(size * win); memset(sbuf, 1, size);
  char h[80], hr[80 * 64]; memset(h, 2, 80);
  // warm up with a ping both ways
  for (int round = 0; round < 2; ++round) {
    int sent = 0, recvd = 0; double t0 = now();
    int n = round == 0 ? 5 : iters;
    for (int i = 0; i < n; i += win) {
      int k = (n - i < win) ? n - i : win; sent = recvd = 0; int hdone = 0;
      ucp_request_param_t sp = {0}; sp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA; sp.cb.send = noop_send; sp.user_data = &sent;
      ucp_request_param_t rp = {0}; rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL; rp.cb.recv = noop_recv; rp.user_data = &recvd;
      ucp_request_param_t hp = rp; hp.user_data = &hdone;
      void* rr[128]; int posted[64] = {0}; int nr = 0;
      for (int j = 0; j < k; ++j) {
        if (hdr) rr[nr++] = ucp_tag_recv_nbx(w, hr + 80 * j, 80, 1000 + j, ~0ull, &hp);
        else { rr[nr++] = ucp_tag_recv_nbx(w, rbuf + size * j, size, j, ~0ull, &rp); posted[j] = 1; }
      }
      void* sr[128]; int ns = 0;
      for (int j = 0; j < k; ++j) {
        if (hdr) sr[ns++] = ucp_tag_send_nbx(ep, h, 80, 1000 + j, &sp);
        sr[ns++] = ucp_tag_send_nbx(ep, sbuf, size, j, &sp);
      }
      int need = hdr ? 2 * k : k;
      while (1) {
        ucp_worker_progress(w);
        if (hdr) for (int j = 0; j < k && j < hdone; ++j) if (!posted[j]) { rr[nr++] = ucp_tag_recv_nbx(w, rbuf + size * j, size, j, ~0ull, &rp); posted[j] = 1; }
        int sdone = 0; for (int j = 0; j < ns; ++j) if (!sr[j] || UCS_PTR_IS_PTR(sr[j]) == 0 || ucp_request_check_status(sr[j]) != UCS_INPROGRESS) sdone++;
        if (sdone == ns && recvd + hdone >= need) break;
      }
      for (int j = 0; j < ns; ++j) if (UCS_PTR_IS_PTR(sr[j])) ucp_request_free(sr[j]);
      for (int j = 0; j < nr; ++j) if (UCS_PTR_IS_PTR(rr[j])) ucp_request_free(rr[j]);
    }
    double t = now() - t0;
    if (round == 1) printf("%s two=%d cm=%d err=%d hdr=%d win=%d size=%zu: %.2f GB/s each way\n", argv[1], two, cm, errmode, hdr, win, size, size * (double)iters / t / 1e9);
  }
  return 0;
}
