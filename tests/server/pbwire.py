"""pbwire.py -- the Protobuf wire format by hand, for the server's tests and
bench/net/server_ir.py: varints, zigzag, fields, and a message read into
{field number: [values]} (Debian has no Python protobuf package by
default)."""
import struct


def varint(n):
    n &= (1 << 64) - 1  # negative int32/int64: ten bytes, two's complement
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def zigzag(n):
    return (n << 1) ^ (n >> 63)


def unzigzag(n):
    return (n >> 1) ^ -(n & 1)


def fv(num, n):  # varint field
    return varint(num << 3) + varint(n)


def fb(num, data):  # length-delimited field
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data


def fd(num, x):  # double field
    return varint(num << 3 | 1) + struct.pack("<d", x)


def read_varint(buf, i):
    n = shift = 0
    while True:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def parse(buf):
    """{field number: [values]}: ints for varints, bytes otherwise."""
    f, i = {}, 0
    while i < len(buf):
        key, i = read_varint(buf, i)
        wt = key & 7
        if wt == 0:
            v, i = read_varint(buf, i)
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        elif wt == 2:
            n, i = read_varint(buf, i)
            v, i = buf[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wt)
        f.setdefault(key >> 3, []).append(v)
    return f
