#!/usr/bin/env python3
"""Writes the committed seed corpus of the fuzz targets (corpus/<target>/<name>) from the wire layouts
documented in the headers (unique_id.hpp, descriptor.hpp, frame.hpp, handshake.hpp, tcp_hello.hpp,
shm_handle.hpp, shm_segment.hpp). Independent of the C++ encoders on purpose: the seeds double as test
vectors of the documented formats. Run it again after a wire format changes:
    python3 tests/fuzz/make_seeds.py
"""
import hashlib
import hmac
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def unique_id(ip4=b"\x0a\x00\x00\x01", port=29500, flags=1, ip6=None):
    secret = bytes((i * 37 + 11) & 0xFF for i in range(32))
    if ip6 is None:
        addr = ip4 + bytes(12)
        fam = 4
    else:
        addr, fam = ip6, 6
    head = struct.pack("<IHHBBH", 0x44494348, 1, flags, fam, 0, port) + addr
    return head + secret + bytes(128 - 60)


def descriptor(rank, nranks, host=b"nodeA", domain=b"host", ip6=None, port=40000, kind=0, pid=1234):
    fam, addr = (4, b"\x0a\x00\x00\x02" + bytes(12)) if ip6 is None else (6, ip6)
    d = struct.pack("<IiiBBBBiiHH", 3, rank, nranks, kind, len(host), len(domain), fam, -1 if kind == 0 else 0,
                    pid, port, 0)
    d += addr + host.ljust(64, b"\0") + domain.ljust(32, b"\0")
    assert len(d) == 140
    return d


def frame(ftype, tag, payload):
    return struct.pack("<IHHII", 0x46424348, 1, ftype, tag, len(payload)) + payload


def mesh_payload(comm, data):
    return struct.pack("<II", comm, 0) + data


def client_hello(purpose, rank):
    return struct.pack("<IHHi", 0x53484348, 1, purpose, rank) + bytes(range(32))


def main():
    v6 = bytes([0x20, 0x01, 0x0D, 0xB8] + [0] * 11 + [1])
    # unique id: binary (launcher and application ids, IPv4 and IPv6), the hex form, near misses.
    write("unique_id", "ipv4_launcher", unique_id())
    write("unique_id", "ipv4_app", unique_id(flags=0))
    write("unique_id", "ipv6", unique_id(ip6=v6))
    write("unique_id", "hex", unique_id().hex().encode())
    write("unique_id", "bad_reserved", unique_id()[:127] + b"\x01")

    write("descriptor", "ipv4", descriptor(1, 4))
    write("descriptor", "ipv6_cuda", descriptor(0, 2, host=b"gpu-node:1a2b3c4d", domain=b"cuda+nccl", ip6=v6, kind=1))
    write("descriptor", "table3", b"".join(descriptor(r, 3) for r in range(3)))

    # frame: first byte = largest payload / 64, then a stream of frames.
    stream = frame(1, 0, descriptor(0, 2)) + frame(4, 7, mesh_payload(0, b"hello")) + frame(6, 0, mesh_payload(0, b""))
    write("frame", "descriptor_data_goodbye", bytes([4]) + stream)
    write("frame", "table", bytes([255]) + frame(2, 0, descriptor(0, 2) + descriptor(1, 2)))
    write("frame", "error", bytes([64]) + frame(3, 0, b"rank 1 was started with nranks=3, rank 0 with nranks=2"))
    write("frame", "error_rank_missing", bytes([64]) + frame(3, (1 << 31) | 2, b"rank 2 of 3 did not join"))
    write("frame", "heartbeat_notice", bytes([2]) + frame(7, 0, b"") +
          frame(8, 0, mesh_payload(0, struct.pack("<i", 2) + b"rank 2 sent nothing")))
    write("frame", "oversized", bytes([1]) + frame(4, 0, bytes(100)))

    # handshake: mode byte (bit 0 client side, bit 1 mesh purpose), then the stranger's bytes.
    write("handshake", "server_root_hello_proof", bytes([0]) + client_hello(1, 0) + bytes(32))
    write("handshake", "server_mesh_hello", bytes([2]) + client_hello(2, 3))
    server_hello = struct.pack("<IHHi", 0x53484348, 1, 2, 1) + bytes(32) + bytes(32)
    write("handshake", "client_mesh_server_hello", bytes([3]) + server_hello)
    write("handshake", "client_root_http", bytes([1]) + b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")

    # mesh: byte = size the test receives, then frames from rank 1.
    write("mesh", "data_then_eof", bytes([5]) + frame(4, 0, mesh_payload(0, b"12345")))
    write("mesh", "collective_goodbye", bytes([4]) + frame(5, 0, mesh_payload(0, b"abcd")) + frame(6, 0, mesh_payload(0, b"")))
    write("mesh", "wrong_size", bytes([8]) + frame(4, 0, mesh_payload(0, b"123")))
    write("mesh", "other_comm", bytes([1]) + frame(4, 0, mesh_payload(77, b"x")) + frame(4, 0, mesh_payload(0, b"y")))
    write("mesh", "heartbeats_then_data", bytes([2]) + frame(7, 0, b"") + frame(7, 0, b"") + frame(4, 0, mesh_payload(0, b"ok")))
    write("mesh", "notice", bytes([2]) + frame(8, 0, mesh_payload(0, struct.pack("<i", 0) + b"about me")) +
          frame(8, 0, mesh_payload(0, struct.pack("<i", 5) + b"out of range")))

    # tcp: hello (26 bytes) and the listener's address handle (128 bytes).
    write("tcp_wire", "hello", struct.pack("<IHHHiiQ", 0x48544348, 2, 1, 4, 3, 0, 0x0123456789ABCDEF))
    # piece header (72 bytes): magic 'HCTP', flags (1: crc), piece number, message bytes, piece bytes, crc,
    # reserved, then the call stamp: word0 magic 'HCS1' | kind << 32 | type << 40 | op << 48, the call
    # number, the message bytes, root + 1 << 32 | piece number (transport/base/call_stamp.hpp)
    def stamp(kind, dtype, op, seq, message, piece, root=-1):
        return struct.pack("<QQQQ", 0x48435331 | kind << 32 | dtype << 40 | op << 48, seq, message,
                           (root + 1) << 32 | piece)
    write("tcp_wire", "piece_crc", struct.pack("<IIQQQII", 0x50544348, 1, 17, 300000, 65536, 0xE3069283, 0)
          + stamp(0, 7, 0, 5, 300000, 4))
    write("tcp_wire", "piece_empty", struct.pack("<IIQQQII", 0x50544348, 0, 0, 0, 0, 0, 0) + stamp(0, 7, 0, 1, 0, 0))
    write("tcp_wire", "piece_rooted", struct.pack("<IIQQQII", 0x50544348, 0, 3, 4096, 4096, 0, 0)
          + stamp(1, 0, 0, 9, 4096, 0, root=2))
    handle4 = struct.pack("<IHHH", 0x48504354, 1, 4, 40001) + b"\x0a\x00\x00\x03" + bytes(12) + struct.pack("<I", 0)
    write("tcp_wire", "handle_ipv4", handle4.ljust(128, b"\0"))
    handle6 = struct.pack("<IHHH", 0x48504354, 1, 6, 40001) + v6 + struct.pack("<I", 2)
    write("tcp_wire", "handle_ipv6", handle6.ljust(128, b"\0"))

    # shm: handle (128 bytes), ring header (256 bytes), segment size (u64).
    prefix = b"0123456789abcdef0123456789abcdef"
    handle = (struct.pack("<IHH", 0x4D485348, 1, 32) + prefix + b"\0").ljust(128, b"\0")
    slots, slot_bytes = 8, 512 * 1024
    info_off = 256
    # SlotInfo (ring version 3): u64 message, u64 bytes, u32 crc, u32 flags, u64 stamp[4]
    data_off = (info_off + slots * 56 + 63) & ~63
    total = data_off + slots * slot_bytes
    header = struct.pack("<QIIQQiiQ", 0x4853_6C63_6374_6568, 3, slots, slot_bytes, total, 1, 0, 0xFEEDFACE)
    header = header.ljust(256, b"\0")
    write("shm_wire", "valid", handle + header + struct.pack("<Q", total))
    write("shm_wire", "short_segment", handle + header + struct.pack("<Q", total - 64))

    # config/env: selector byte (value % 12 picks the variable), then the value.
    for sel, name, value in [(0, "chunk", b"512K"), (1, "sockets", b"4"), (2, "timeout", b"1.5"), (3, "bool", b"yes"),
                             (4, "ifname", b"^docker,=lo"), (5, "debug", b"INFO"), (21, "subsys", b"INIT,^NET"),
                             (6, "algo", b"ring"), (7, "secret", b"00112233445566778899aabbccddeeff"),
                             (8, "launch", b"1|2|1|2|" + unique_id().hex().encode()),
                             (9, "nodelist", b"node[01-04,07],gpu5"), (26, "tasks", b"2(x3),1"),
                             (11, "decimal", b"-17")]:
        write("config_env", name, bytes([sel]) + value)

    # agent_wire (src/agent/metadata.hpp, wire.hpp): a metadata blob under the fuzz target's secret, and a
    # handshake hello frame (u32 length, then the hello).
    secret = b"fuzzing agents' secret, 32 bytes"
    key = hmac.new(bytes(32), b"hetccl agent key v1" + secret, hashlib.sha256).digest()

    def text(b):
        return struct.pack("<H", len(b)) + b

    body = struct.pack("<IHH", 0x4D474148, 1, 0) + bytes(range(16)) + struct.pack("<QII", 3, 4242, 2)
    body += text(b"prefill-0") + text(b"127.0.0.1:40000") + text(b"node1:abcd1234")
    body += struct.pack("<IIHHQ", 0, 1, 0, 0, 4096) + struct.pack("<IIHHQ", 1, 2, 1, 0, 1 << 20)
    write("agent_wire", "blob", body + hmac.new(key, b"hetccl agent metadata v1" + body, hashlib.sha256).digest())
    hello = struct.pack("<II", 0x48474148, 1) + bytes([1] * 16) + bytes([7] * 16) + bytes(range(16))
    hello += text(b"decode-1") + struct.pack("<I", 1)
    proof = text(b"/hetccl-agw-4242-00112233445566778899aabb") + bytes(32)
    write("agent_wire", "hello", struct.pack("<I", len(hello)) + hello + struct.pack("<I", len(proof)) + proof)


if __name__ == "__main__":
    main()
