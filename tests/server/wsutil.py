"""wsutil.py -- WebSocket by hand for the server tests (robust.py, stop.py):
the client handshake, masked frames, and reading one server frame."""
import base64
import os
import socket
import struct


def ws_connect(host, port, proto="hrana2"):
    s = socket.create_connection((host, port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET / HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: %s\r\n\r\n"
               % (host, port, key, proto)).encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            raise EOFError("closed during handshake")
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    assert b" 101 " in head.split(b"\r\n")[0], head
    return s, rest


def ws_frame(payload, opcode=1, fin=True):
    mask = os.urandom(4)
    n = len(payload)
    hdr = bytes([(0x80 if fin else 0) | opcode])
    if n < 126:
        hdr += bytes([0x80 | n])
    elif n < 65536:
        hdr += bytes([0x80 | 126]) + struct.pack(">H", n)
    else:
        hdr += bytes([0x80 | 127]) + struct.pack(">Q", n)
    return hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def ws_recv(s, rest):
    """One server frame: (opcode, payload, rest). Opcode None when closed."""
    buf = rest
    def need(k):
        nonlocal buf
        while len(buf) < k:
            c = s.recv(65536)
            if not c:
                raise EOFError
            buf += c
    try:
        need(2)
        op, n = buf[0] & 0x0F, buf[1] & 0x7F
        off = 2
        if n == 126:
            need(4)
            n, off = struct.unpack(">H", buf[2:4])[0], 4
        elif n == 127:
            need(10)
            n, off = struct.unpack(">Q", buf[2:10])[0], 10
        need(off + n)
        return op, buf[off:off + n], buf[off + n:]
    except (EOFError, ConnectionResetError):
        return None, b"", b""
