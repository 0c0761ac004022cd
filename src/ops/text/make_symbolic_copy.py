#!/usr/bin/env python3
"""Copies an ELF64 shared library, setting DF_SYMBOLIC in its DT_FLAGS.

Why: Debian's libsentencepiece.so.0 carries its own protobuf-lite 3.14 and exports those
symbols. In inferd, gRPC's libprotobuf 3.21 is loaded first, so SentencePiece's generated code
would bind to 3.21's functions and abort ("compiled against 3.14.0 ... installed 3.21.12").
DF_SYMBOLIC (what `-Bsymbolic` sets) makes the dynamic loader resolve the library's own
references inside it first, so SentencePiece uses the protobuf it was built with. The copy is
dlopen'ed RTLD_LOCAL (sentencepiece_tokenizer.cc), so its symbols never reach anyone else.

usage: make_symbolic_copy.py <source.so> <destination.so>
"""
import shutil
import struct
import sys

DT_NULL, DT_FLAGS, DF_SYMBOLIC = 0, 30, 0x2
PT_DYNAMIC = 2


def main(source: str, destination: str) -> int:
    data = bytearray(open(source, "rb").read())
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        sys.exit(f"{source}: not a little-endian ELF64 file")
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type != PT_DYNAMIC:
            continue
        for entry in range(p_offset, p_offset + p_filesz, 16):
            tag, value = struct.unpack_from("<qQ", data, entry)
            if tag == DT_NULL:
                break
            if tag == DT_FLAGS:
                struct.pack_into("<qQ", data, entry, tag, value | DF_SYMBOLIC)
                tmp = destination + ".tmp"
                open(tmp, "wb").write(data)
                shutil.copymode(source, tmp)
                shutil.move(tmp, destination)
                return 0
    sys.exit(f"{source}: no DT_FLAGS entry to mark DF_SYMBOLIC")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
