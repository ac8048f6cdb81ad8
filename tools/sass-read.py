#!/usr/bin/env python3
"""sass-read: the sm_90 machine code of nvcc objects, read from the words.

    tools/sass-read.py ops   [-k REGEX] [--only NAME,..] [--raw] FILE...
    tools/sass-read.py smem  [-k REGEX] [--at NAME] FILE...
    tools/sass-read.py loops [-k REGEX] [--min N] [-v] FILE...

FILE is an nvcc object (.o: the cubins of its .nv_fatbin section, found
with tools/cubin-text.py's parser), a fatbin extracted with objcopy, or a
.cubin. Only sm_90 cubins are read; -k keeps the kernels whose demangled
name matches REGEX.

  ops    per kernel: instruction words (NOP padding included) and a
         histogram by name (--raw: by 12-bit opcode; --only: just these
         names and their dotted forms, absent ones as 0, e.g. --only
         HGMMA,STL,LDL,USETMAXREG: HGMMA.RS, STL.32, USETMAXREG.ALLOC.224).
  smem   per kernel: shared-memory accesses by size (LDS.32, STS.128,
         STSM, ...); --at NAME lists the addresses of that kind.
  loops  per backward branch over more than N instructions (default 64):
         its span, FFMA / LDS / LDGSTS / HGMMA / BAR counts, the static
         schedule length (sum of stall counts per FFMA), FFMAs whose
         uncached sources share a register bank (2 banks, reg % 2),
         and renamed accumulators (FFMA Rd != Rc); with no FFMA in the
         loop, its stall sum. Spans may nest or overlap (one per back edge).
         -v also lists every branch and its target.

No cuobjdump or nvdisasm is needed. The encoding (128-bit words, little
endian, bit i of the word = bit i % 64 of 64-bit half i / 64):
  opcode 0-11; predicate 12-15 (bits 12-14 the register, 7 = PT; bit 15
  negates); Rd 16-23, Ra 24-31, Rb 32-39, Rc 64-71 (255 = RZ); memory
  access size 73-75 (2 = 16 bit, 4 = 32, 5 = 64, 6 = 128); BRA target:
  a signed count of 4-byte units in bits 16-23 (low) and 34-81 (high),
  from the next instruction; control: stall 105-108, yield 109, write
  barrier 110-112, read barrier 113-115, wait mask 116-121, reuse flags
  122-124 (Ra, Rb, Rc). A name ending in (!PT) is predicated off: it never
  executes (ptxas pads loops with @!PT LDS RZ, [RZ]). The names, the
  predicate, FFMA register fields, BRA targets and sizes were checked,
  instruction by instruction, against cuobjdump -sass (CUDA 13.0) of
  kernels/sgemm_simt.o, gemm_f32_3xtf32.o and gemm_bf16_wgmma_persistent.o
  on the device (56,712 instructions); the control fields, which cuobjdump
  does not print, come from the SGEMM lab notes (sgemm_simt.NOTES.md at
  45112c1), checked there against cuobjdump's counts. An opcode not in the
  table shows as 0xNNN.
"""
import argparse
import collections
import importlib.util
import os
import re
import signal
import struct
import subprocess
import sys

_spec = importlib.util.spec_from_file_location(
    "cubin_text", os.path.join(os.path.dirname(os.path.abspath(__file__)), "cubin-text.py"))
cubin_text = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cubin_text)

# 12-bit opcode -> name (operand forms share a name: IADD3 is 0x210 with a
# register, 0x810 with an immediate, 0xc10 with a uniform register).
NAMES = {}
for _names, _ops in (
        ("MOV", "202 802 c02"), ("SEL", "207 807"), ("FMNMX", "209"), ("FSETP", "20b 80b"),
        ("ISETP", "20c 80c c0c"), ("IADD3", "210 810 c10"), ("LEA", "211 811 c11"),
        ("LOP3", "212 812 c12"), ("IABS", "213"), ("FMUL", "220"), ("FADD", "221"),
        ("FFMA", "223"), ("IMAD", "224 424 824 c24 e24"), ("IMAD.WIDE", "225 825 c25"),
        ("IMAD.HI", "227"), ("F2FP", "23e"), ("USEL", "287 887"), ("UISETP", "28c 88c"),
        ("UIADD3", "290 890"), ("UIADD3.64", "897"), ("ULEA", "291"), ("ULOP3", "292 892"),
        ("UIMAD", "2a4 8a4"), ("UIMAD.WIDE", "2a5 8a5"), ("R2UR", "2ca"), ("F2I", "305"),
        ("I2F", "306 d06"), ("MUFU", "308"), ("B2R", "31c"), ("STS", "388 988"),
        ("UTMASTG", "3b5"), ("FENCE.VIEW.ASYNC", "3c6"), ("HFMA2", "435"), ("BAR.SYNC", "51d"),
        ("SHFL", "589"), ("SYNCS.PHASECHK", "5a7"), ("SYNCS.EXCH", "5b2"), ("UTMALDG", "5b4"),
        ("UTMAPF", "5b8"), ("CS2R", "805"), ("VOTE", "806"), ("PRMT", "816"), ("SHF", "819"),
        ("PLOP3", "81c"), ("ELECT", "82f"), ("VIADD", "836"), ("STSM", "844"), ("VIMNMX", "848"),
        ("UMOV", "882 c82"), ("VOTEU", "886"), ("USHF", "899"), ("NOP", "918"), ("S2R", "919"),
        ("DEPBAR", "91a"), ("BSYNC", "941"), ("BSSY", "945"), ("BRA", "947"), ("EXIT", "94d"),
        ("LDG", "981"), ("LDS", "984"), ("STG", "986"), ("CCTL", "98f"), ("MEMBAR", "992"),
        ("SYNCS.ARRIVE", "9a7"), ("LDGDEPBAR", "9af"), ("UTMACMDFLUSH", "9b7"),
        ("UTMACCTL", "9b9"), ("S2UR", "9c3"), ("WARPGROUP", "9c5"), ("USETMAXREG", "9c8"),
        ("HGMMA.SS", "9f0"), ("ULDC", "ab9"), ("BAR", "b1d"), ("LDC", "b82"),
        ("HGMMA.RS", "df0"), ("LDGSTS", "fae"), ("STL", "387"), ("LDL", "983")):
    for _op in _ops.split():
        NAMES[int(_op, 16)] = _names
FFMA, LDS, STS, STSM, LDGSTS, BRA = 0x223, 0x984, (0x388, 0x988), 0x844, 0xfae, 0x947
HGMMA, BAR = (0xdf0, 0x9f0), (0xb1d, 0x51d)
SIZED = {0x981, 0x984, 0x986, 0x388, 0x988, 0xfae, 0x387, 0x983}  # loads/stores with a size
SIZES = {0: "U8", 1: "S8", 2: "U16", 3: "S16", 4: "32", 5: "64", 6: "128"}


class Ins:
    __slots__ = ("w", "op", "rd", "src", "stall", "reuse", "size")

    def __init__(self, word):
        lo, hi = struct.unpack("<QQ", word)
        w = self.w = lo | hi << 64
        self.op = w & 0xfff
        self.rd = w >> 16 & 0xff
        self.src = (w >> 24 & 0xff, w >> 32 & 0xff, w >> 64 & 0xff)  # Ra, Rb, Rc
        self.stall = w >> 105 & 0xf
        self.reuse = w >> 122 & 0x7
        self.size = w >> 73 & 0x7

    def field(self, lo, n):
        return self.w >> lo & ((1 << n) - 1)

    def name(self, raw=False):
        never = "(!PT)" if self.field(12, 4) == 0xf else ""  # predicated off: never executes
        if raw:
            return "0x%03x%s" % (self.op, never)
        n = NAMES.get(self.op, "0x%03x" % self.op)
        if self.op in SIZED:
            n += "." + SIZES.get(self.size, "?%d" % self.size)
        elif self.op == 0x9c5:  # wgmma.fence (ARRIVE) / wgmma.wait_group (DEPBAR)
            n += ".DEPBAR" if self.w >> 47 & 1 else ".ARRIVE"
        elif self.op == 0x9c8:  # setmaxnreg: the count in bits 32-39
            n += "%s.%d" % (".DEALLOC" if self.w >> 72 & 1 else ".ALLOC", self.field(32, 8))
        elif self.op == 0xb1d:
            n += ".RED" if self.w >> 78 & 1 else ".SYNC"
        return n + never

    def target(self, i):
        """Index of a BRA's target, for the instruction at index i."""
        v = self.field(16, 8) | self.field(34, 48) << 8
        if v >> 55:
            v -= 1 << 56
        return i + 1 + v // 4


def short_names(mangled):
    """Compact demangled names: no return type, parameters or namespaces."""
    try:
        out = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True,
                             text=True, check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return {m: m for m in mangled}
    result = {}
    for m, d in zip(mangled, out):
        d = d.strip()
        if d.startswith("void "):
            d = d[5:]
        depth = 0
        for pos, ch in enumerate(d):  # drop the parameter list: the first '(' at depth 0
            depth += ch == "<"
            depth -= ch == ">"
            if ch == "(" and depth == 0:
                d = d[:pos]
                break
        result[m] = re.sub(r"\b\w+::", "", d)
    return result


def load(path):
    """[(arch, kernel name, [Ins])] of every sm_90 cubin in a .o, fatbin or .cubin."""
    head = open(path, "rb").read(20)
    if head[:4] == b"\x7fELF" and struct.unpack_from("<H", head, 18)[0] == 190:  # EM_CUDA
        elves = [("cubin", open(path, "rb").read())]
    else:
        elves = [("sm_%d" % a, e) for a, e in cubin_text.cubins(cubin_text.fatbin_of(path))]
    out = []
    for arch, elf in elves:
        if elf is None:
            print("%s: a compressed cubin (%s), not read" % (path, arch), file=sys.stderr)
        elif arch in ("cubin", "sm_90"):
            for name, text in cubin_text.text_sections(elf).items():
                out.append((arch, name, [Ins(text[o:o + 16]) for o in range(0, len(text), 16)]))
        else:
            print("%s: %s cubin skipped (sm_90 encoding only)" % (path, arch), file=sys.stderr)
    return out


def kernels(args):
    loaded = []
    for p in args.files:
        try:
            found = load(p)
        except (OSError, subprocess.CalledProcessError, struct.error, ValueError) as e:
            sys.exit("%s: not an nvcc object, fatbin or cubin (%s)" % (p, e))
        if not found:
            print("%s: no sm_90 kernel" % p, file=sys.stderr)
        loaded += [(p, a, n, code) for a, n, code in found]
    labels = short_names(sorted({n for _, _, n, _ in loaded}))
    for path, arch, name, code in sorted(loaded, key=lambda x: (x[0], labels[x[2]])):
        if not args.kernel or re.search(args.kernel, labels[name]):
            yield "%s %s %s" % (path, arch, labels[name]), code


def cmd_ops(args):
    only = set(args.only.split(",")) if args.only else None
    for title, code in kernels(args):
        hist = collections.Counter(i.name(args.raw) for i in code)
        print("%s: %d words" % (title, len(code)))
        rows = [(n, c) for n, c in sorted(hist.items(), key=lambda x: (-x[1], x[0]))
                if only is None or any(n == o or n.startswith(o + ".") for o in only)]
        if only is not None:  # the names asked for that are absent: 0
            rows += [(o, 0) for o in sorted(only) if not any(
                n == o or n.startswith(o + ".") for n in hist)]
        for k in range(0, len(rows), 6):
            print("   " + "".join("%-24s" % ("%s %d" % r) for r in rows[k:k + 6]).rstrip())


def cmd_smem(args):
    for title, code in kernels(args):
        kinds = collections.defaultdict(list)
        for i, ins in enumerate(code):
            if ins.op == LDS or ins.op in STS or ins.op == STSM:
                kinds[ins.name()].append(i)
        print("%s: %s" % (title, ", ".join("%s %d" % (k, len(v)) for k, v in sorted(kinds.items()))
                          or "no shared-memory access"))
        if args.at:
            where = " ".join("%04x" % (16 * i) for i in kinds.get(args.at, []))
            print("   %s at %s" % (args.at, where))


def loop_stats(body):
    """The statistics of one loop body (a list of Ins, back edge last)."""
    ops = collections.Counter(x.op for x in body)
    size = collections.Counter((x.op, x.name()) for x in body)
    conflicts = renamed = 0
    cache = {}  # operand slot -> register held in the reuse cache
    for x in body:
        if x.op != FFMA:
            cache = {}  # a reuse survives only from FFMA to FFMA
            continue
        renamed += x.rd != x.src[2]
        reads = {r for s, r in enumerate(x.src) if r != 255 and cache.get(s) != r}
        conflicts += max(collections.Counter(r % 2 for r in reads).values(), default=0) >= 2
        cache = {s: x.src[s] for s in range(3) if x.reuse >> s & 1}
    ffma = ops[FFMA]
    return ops, size, ffma, conflicts, renamed


def cmd_loops(args):
    for title, code in kernels(args):
        print(title)
        for i, ins in enumerate(code):
            if ins.op != BRA:
                continue
            t = ins.target(i)
            if args.verbose:
                print("   BRA %04x -> %04x%s" % (16 * i, 16 * t, "  (back)" if t <= i else ""))
            if t > i or i - t <= args.min:
                continue
            body = code[t:i + 1]
            ops, size, ffma, conf, ren = loop_stats(body)
            kinds = lambda op: ", ".join("%d %s" % (size[(op, n)], n[n.index("."):])
                                         for n in sorted(n for o, n in size if o == op)) or "-"
            print("   loop %04x-%04x: %d instructions, %d FFMA, %d LDS (%s), %d LDGSTS (%s), "
                  "%d HGMMA, %d BAR" % (16 * t, 16 * i, len(body), ffma, ops[LDS], kinds(LDS),
                                        ops[LDGSTS], kinds(LDGSTS), sum(ops[o] for o in HGMMA),
                                        sum(ops[o] for o in BAR)))
            if ffma:
                print("      stall cycles/FFMA %.3f, 2-bank conflicts %d (%.3f/instr), renamed "
                      "accumulators %d" % (sum(x.stall for x in body) / ffma, conf,
                                           conf / len(body), ren))
            else:
                print("      stall cycles %d (no FFMA)" % sum(x.stall for x in body))


def main(argv):
    p = argparse.ArgumentParser(prog="sass-read.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name, fn in (("ops", cmd_ops), ("smem", cmd_smem), ("loops", cmd_loops)):
        s = sub.add_parser(name)
        s.set_defaults(fn=fn)
        s.add_argument("-k", "--kernel", help="regex on the demangled kernel name")
        s.add_argument("files", nargs="+", metavar="FILE")
        if name == "ops":
            s.add_argument("--only", help="comma-separated names to show")
            s.add_argument("--raw", action="store_true", help="by 12-bit opcode")
        elif name == "smem":
            s.add_argument("--at", metavar="NAME", help="list the addresses of NAME, e.g. STS.32")
        else:
            s.add_argument("--min", type=int, default=64, help="shortest loop body (64)")
            s.add_argument("-v", "--verbose", action="store_true", help="list every branch")
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    args = p.parse_args(argv[1:])
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under | head
    args.fn(args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
