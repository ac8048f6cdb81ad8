#!/usr/bin/env python3
"""cubin-text: the machine code of every kernel in an nvcc object, by hash.

    tools/cubin-text.py OBJECT.o [OBJECT.o ...]
    tools/cubin-text.py --diff BEFORE.o AFTER.o
    tools/cubin-text.py --diff-code BEFORE.o AFTER.o

(An OBJECT may also be a .nv_fatbin section already extracted with objcopy.)

For each cubin embedded in the object's .nv_fatbin section, prints one line
per kernel: its architecture, an SHA-256 of its .text section (the SASS
bytes, without names, line tables or relocations) and its name. With --diff
it compares two objects kernel by kernel and exits 1 if any .text differs,
so "the cubins are byte-identical apart from line info" can be checked on
a machine without cuobjdump. --diff-code compares the machine code alone,
whatever the kernels are called (after a rename): the same multiset of
.text sections per architecture, or exit 1. Only uncompressed cubins are read
(nvcc's default for sm_90a objects); a compressed entry is reported.
"""
import hashlib
import struct
import subprocess
import sys
import tempfile


def fatbin_of(obj):
    raw = open(obj, "rb").read(4)
    if raw == struct.pack("<I", 0xBA55ED50):  # already a fatbin (objcopy'd)
        return open(obj, "rb").read()
    with tempfile.NamedTemporaryFile() as out:
        subprocess.run(["objcopy", "-O", "binary", "--only-section=.nv_fatbin", obj, out.name],
                       check=True)
        return open(out.name, "rb").read()


def cubins(fatbin):
    """(arch, elf bytes) of each ELF entry of each fatbin in the section."""
    off = 0
    while off + 16 <= len(fatbin):
        magic, _version, header_size, fat_size = struct.unpack_from("<IHHQ", fatbin, off)
        if magic != 0xBA55ED50:
            break
        pos, end = off + header_size, off + header_size + fat_size
        while pos < end:
            kind, _unk, entry_header, payload = struct.unpack_from("<HHIQ", fatbin, pos)
            arch = struct.unpack_from("<I", fatbin, pos + 28)[0]
            flags = struct.unpack_from("<Q", fatbin, pos + 40)[0] if entry_header >= 48 else 0
            data = fatbin[pos + entry_header: pos + entry_header + payload]
            if kind == 2:
                if data[:4] == b"\x7fELF":
                    yield arch, data
                else:
                    yield arch, None  # compressed (flags %x)
            pos += entry_header + payload
        off = end


def text_sections(elf):
    """{kernel name: .text bytes} of an ELF64 cubin."""
    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    sections = []
    for i in range(shnum):
        name, _type, _flags, _addr, offset, size = struct.unpack_from("<IIQQQQ", elf, shoff + i * shentsize)
        sections.append((name, offset, size))
    _, str_off, str_size = sections[shstrndx]
    strtab = elf[str_off: str_off + str_size]
    out = {}
    for name, offset, size in sections:
        sname = strtab[name: strtab.index(b"\0", name)].decode()
        if sname.startswith(".text."):
            out[sname[len(".text."):]] = elf[offset: offset + size]
    return out


def kernels(obj):
    result = {}
    for arch, elf in cubins(fatbin_of(obj)):
        if elf is None:
            result[("sm_%d" % arch, "(compressed cubin)")] = b""
            continue
        for name, text in text_sections(elf).items():
            result[("sm_%d" % arch, name)] = text
    return result


def main(argv):
    if len(argv) == 4 and argv[1] == "--diff":
        before, after = kernels(argv[2]), kernels(argv[3])
        differ = 0
        for key in sorted(set(before) | set(after)):
            a, b = before.get(key), after.get(key)
            if a != b:
                differ += 1
                what = "only before" if b is None else "only after" if a is None else "text differs"
                print("%s %s: %s" % (key[0], key[1], what))
        print("%d kernels, %d differ" % (len(set(before) | set(after)), differ))
        return 1 if differ else 0
    if len(argv) == 4 and argv[1] == "--diff-code":
        def codes(obj):
            out = {}
            for (arch, name), text in kernels(obj).items():
                out.setdefault(arch, []).append(hashlib.sha256(text).hexdigest())
            return {arch: sorted(h) for arch, h in out.items()}
        before, after = codes(argv[2]), codes(argv[3])
        same = before == after
        for arch in sorted(set(before) | set(after)):
            print("%s: %d kernels before, %d after, machine code %s" %
                  (arch, len(before.get(arch, [])), len(after.get(arch, [])),
                   "identical" if before.get(arch) == after.get(arch) else "DIFFERS"))
        return 0 if same else 1
    if len(argv) < 2 or argv[1].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for obj in argv[1:]:
        for (arch, name), text in sorted(kernels(obj).items()):
            print("%s %s %s %s" % (obj, arch, hashlib.sha256(text).hexdigest()[:16], name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
