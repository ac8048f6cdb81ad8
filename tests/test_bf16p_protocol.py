#!/usr/bin/env python3
"""The mbarrier / ring / store protocol of kernels/gemm_bf16_wgmma_persistent.cu,
model-checked on the CPU by random interleavings.

The protocol is read from the kernel's source, not restated here: the tile
and ring sizes (Cfg), the two barriers' arrival counts, the transaction
bytes the producer expects and the TMA boxes it issues per layout, the
parity each side waits on, where a consumer warp releases a stage (which
stage, before or after which wgmma_wait<N>, and the release of a tile's
last stage), the epilogue's staging buffers, its bulk_wait_group_read<N>
and named barrier, and the final bulk_wait_group<0>. If the source no
longer has a statement the model reads, the test fails and says which.

The model: one CTA. The producer thread; 2 x 4 consumer warps, each its
own agent (lane 0 arrives on empty[], wgmma groups are per warpgroup and
read their stage from the first warp's issue until they complete, in
order, some time after all 4 warps issued; wgmma_wait<N> waits until all
but the warp's newest N groups have completed); TMA boxes land in any
order and add their bytes to the stage's full[] barrier; each TMA store
reads its staging buffer until some later time, then completes. An
mbarrier phase completes when its pending arrivals and transaction count
reach 0 (try_wait.parity P passes once the phase of parity P is over).
Checked: every wgmma reads the whole stage of its own (tile, k-tile); no
TMA load lands in a stage a wgmma group still reads; no staging buffer is
written while a store reads it; a store reads a buffer all 4 warps wrote
for that subtile; the CTA exits with no load or store pending; no
deadlock. Not modelled: the memory model (fence.proxy.async, acquire /
release), timing.

Then the same checks run on copies of the source with deliberate mistakes
(MUTATIONS below); each must be caught. Exit 0 when the kernel passes and
every mutation is caught, 1 otherwise (2: the source could not be read).

    tests/test_bf16p_protocol.py [path/to/gemm_bf16_wgmma_persistent.cu]
(default: $GS_SRCDIR/kernels/..., or the one beside this file's folder).
"""
import os
import random
import re
import sys

# name | regex | replacement: each a mistake in the kernel's protocol
MUTATIONS = r"""
empty[] counts one warpgroup|mbar_init\(&sm\.empty\[s\], Cfg::CONSUMER_WARPS\)|mbar_init(&sm.empty[s], 4)
expect_tx of A's bytes only|mbar_arrive_expect_tx\(&sm\.full\[s\], Cfg::STAGE_BYTES\)|mbar_arrive_expect_tx(&sm.full[s], Cfg::A_STAGE_BYTES)
producer waits on the wrong parity|mbar_wait\(&sm\.empty\[s\], phase \^ 1u|mbar_wait(&sm.empty[s], phase
consumer never flips its phase|(prev_s = s;\s*if \(\+\+s == Cfg::STAGES\) \{\s*s = 0;)\s*phase \^= 1u;|\1
release before the wgmma_wait|(wgmma_commit\(\);)(\s*/\*(?s:.*?)\*/)?(\s*wgmma_wait<1>\(\);)(\s*if \(kt > 0 && lane == 0\) mbar_arrive\(&sm\.empty\[prev_s\]\);)|\1\4\3
release the stage just issued|(if \(kt > 0 && lane == 0\) mbar_arrive\(&sm\.empty\[)prev_s\]|\1s]
wgmma_wait<2> before the release|wgmma_wait<1>\(\);|wgmma_wait<2>();
tile's last stage never released|(wgmma_wait<0>\(\);(\s*/\*(?s:.*?)\*/)?)\s*if \(lane == 0\) mbar_arrive\(&sm\.empty\[prev_s\]\);|\1
one staging buffer|sm\.epi\[cw\]\[sub % Cfg::EPI_BUFS\]|sm.epi[cw][0]
store read-wait one too shallow|bulk_wait_group_read<Cfg::EPI_BUFS - 2>|bulk_wait_group_read<Cfg::EPI_BUFS - 1>
one named barrier for both warpgroups|named_barrier_sync\(2 \+ cw, 128\)|named_barrier_sync(2, 128)
no final bulk_wait_group<0>|if \(t == 0\) bulk_wait_group<0>\(\);|
"""


class SourceError(Exception):
    pass


def find(text, pattern, what):
    m = re.search(pattern, text, re.S)
    if not m:
        raise SourceError("the kernel no longer has %s (/%s/): update %s" %
                          (what, pattern, os.path.basename(__file__)))
    return m


def protocol(src):
    """The protocol's parameters, read from the kernel source."""
    c = {k: int(find(src, r"\b%s = (\d+)[;,]" % k, "Cfg::" + k).group(1))
         for k in ("BM", "BN", "BK", "STAGES", "CONSUMERS", "EPI_N", "EPI_BUFS", "MN_BOX")}
    c["CONSUMER_WARPS"] = c["CONSUMERS"] * int(
        find(src, r"CONSUMER_WARPS = CONSUMERS \* (\d+);", "CONSUMER_WARPS").group(1))
    c["A_STAGE_BYTES"], c["B_STAGE_BYTES"] = c["BM"] * c["BK"] * 2, c["BN"] * c["BK"] * 2
    find(src, r"STAGE_BYTES = A_STAGE_BYTES \+ B_STAGE_BYTES;", "STAGE_BYTES = A + B")
    c["STAGE_BYTES"] = c["A_STAGE_BYTES"] + c["B_STAGE_BYTES"]
    value = lambda e: int(e) if e.isdigit() else c[e.replace("Cfg::", "")]
    kern = find(src, r"gemmshim_bf16_persistent_kernel\(.*?\n\}\n", "the kernel").group(0)
    prod = find(kern, r"if \(wg == 0\) \{(.*?)/\* ---- consumer", "the producer").group(1)
    cons = find(kern, r"/\* ---- consumer warpgroups ---- \*/(.*)", "the consumers").group(1)
    epi = find(src, r"void epilogue_tile\(.*?\n\}\n", "epilogue_tile").group(0)
    p = dict(c)
    init = lambda bar: value(find(kern, r"mbar_init\(&sm\.%s\[s\], ([\w:]+)\)" % bar,
                                  bar + " init").group(1))
    p["full_count"], p["empty_count"] = init("full"), init("empty")
    m = find(prod, r"mbar_wait\(&sm\.empty\[s\], (phase(?: \^ 1u)?),", "the producer's wait")
    p["prod_flip_parity"] = m.group(1) != "phase"
    p["expect_bytes"] = value(find(prod, r"mbar_arrive_expect_tx\(&sm\.full\[s\], ([\w:]+)\)",
                                   "expect_tx").group(1))
    n_box = lambda op: c["B" + op] // c["MN_BOX"] if re.search(
        r"< Cfg::B%s / \(int\)MN_BOX; \+\+\w+\)\s*tma_load_2d" % op, prod) else None
    p["a_mn_boxes"], p["b_mn_boxes"] = n_box("M"), n_box("N")
    if not p["a_mn_boxes"] or not p["b_mn_boxes"]:
        raise SourceError("the producer's MN-major box loops not found")
    p["prod_phase_flips"] = "phase ^= 1u;" in prod
    m = find(cons, r"mbar_wait\(&sm\.full\[s\], (phase(?: \^ 1u)?),", "the consumers' wait")
    p["cons_flip_parity"] = m.group(1) != "phase"
    loop = find(cons, r"for \(int kt = 0; kt < p\.KT; \+\+kt\) \{(.*?)\n    \}\n",
                "the k loop").group(1)
    commit = find(loop, r"wgmma_commit\(\);", "wgmma_commit").start()
    wait = find(loop, r"wgmma_wait<(\d+)>\(\);", "the loop's wgmma_wait")
    rel = find(loop, r"if \(kt > 0 && lane == 0\) mbar_arrive\(&sm\.empty\[(\w+)\]\);",
               "the release")
    p["wait_depth"] = int(wait.group(1))
    p["release_after_wait"] = rel.start() > wait.start() > commit
    p["release_prev"] = rel.group(1) == "prev_s"
    p["cons_phase_flips"] = re.search(r"phase \^= 1u;", loop) is not None
    tail = cons[cons.index(loop) + len(loop):]
    p["tail_release"] = re.search(r"wgmma_wait<0>\(\);(\s*/\*.*?\*/)?\s*if \(lane == 0\) "
                                  r"mbar_arrive\(&sm\.empty\[prev_s\]\);", tail, re.S) is not None
    m = find(epi, r"sm\.epi\[cw\]\[([^\]]+)\]", "the staging buffer choice")
    p["epi_bufs"] = c["EPI_BUFS"] if m.group(1) == "sub % Cfg::EPI_BUFS" else 1
    rw = find(epi, r"bulk_wait_group_read<Cfg::EPI_BUFS - (\d+)>\(\);", "the store read-wait")
    bar = find(epi, r"named_barrier_sync\(([^,]+), (\d+)\);", "the named barrier")
    p["read_wait_depth"] = c["EPI_BUFS"] - int(rw.group(1))
    p["read_wait_before_barrier"] = rw.start() < bar.start()
    p["barrier_per_wg"] = "cw" in bar.group(1)
    p["barrier_warps"] = int(bar.group(2)) // 32
    p["final_wait"] = re.search(r"if \(t == 0\) bulk_wait_group<0>\(\);", cons) is not None
    return p


class Bug(Exception):
    pass


def check(cond, *what):
    if not cond:
        raise Bug(" ".join(str(w) for w in what))


class Bar:
    """An mbarrier: a phase completes when arrivals and tx-count reach 0."""

    def __init__(self, count):
        self.count = self.pending = count
        self.tx = self.phase = 0

    def _step(self):
        if self.pending == 0 and self.tx == 0:
            self.phase += 1
            self.pending = self.count

    def arrive(self, tx=0):
        check(self.pending > 0, "more arrivals than the count")
        self.tx += tx
        self.pending -= 1
        self._step()

    def complete_tx(self, b):
        self.tx -= b  # may go negative for a while
        self._step()

    def passed(self, parity):  # try_wait.parity
        return (self.phase & 1) != parity


def run(p, lay, tiles, KT, seed):
    """One random interleaving; returns None or what went wrong."""
    rnd = random.Random(seed)
    S, NW = p["STAGES"], p["barrier_warps"]
    full = [Bar(p["full_count"]) for _ in range(S)]
    empty = [Bar(p["empty_count"]) for _ in range(S)]
    split = lambda nbytes, n: [nbytes // n] * n  # n boxes of an MN-major operand
    a_boxes = [p["A_STAGE_BYTES"]] if lay == "TN" else split(p["A_STAGE_BYTES"], p["a_mn_boxes"])
    b_boxes = split(p["B_STAGE_BYTES"], p["b_mn_boxes"]) if lay == "NT" else [p["B_STAGE_BYTES"]]
    nbox = len(a_boxes) + len(b_boxes)
    stage = [dict() for _ in range(S)]        # box index -> (tile, kt) landed there
    readers = [set() for _ in range(S)]       # wgmma groups reading the stage
    loads = []                                # TMA loads in flight: (stage, box, tag, bytes)
    groups = {wg: [] for wg in range(p["CONSUMERS"])}  # per warpgroup, in issue order
    bufs = {}                                 # (wg, buf) -> {warp: (tile, sub)} written
    stores = []                               # [wg, buf, reading, done]
    barriers = {}                             # named barrier id -> [arrived, generation]
    # How fast the hardware is against the warps, per run: slow tensor cores or
    # slow stores leave more stages and buffers in use when the warps move on.
    speed = {e: rnd.choice((0.05, 0.3, 1.0, 3.0))
             for e in ("tma", "mma", "store-read", "store-done")}

    def producer():
        s = ph = 0
        for t in range(tiles):
            for kt in range(KT):
                par = ph ^ 1 if p["prod_flip_parity"] else ph
                yield lambda s=s, par=par: empty[s].passed(par)
                full[s].arrive(p["expect_bytes"])
                for i, b in enumerate(a_boxes + b_boxes):
                    loads.append((s, i, (t, kt), b))
                s += 1
                if s == S:
                    s = 0
                    ph ^= p["prod_phase_flips"]
                yield None

    def consumer(wg, w):
        s = prev = ph = 0
        mine = []

        def read_waited():  # bulk_wait_group_read<N>: all but the newest N done reading
            own = [x for x in stores if x[0] == wg]
            return not any(x[2] for x in own[:max(len(own) - p["read_wait_depth"], 0)])

        for t in range(tiles):
            for kt in range(KT):
                par = ph ^ 1 if p["cons_flip_parity"] else ph
                yield lambda s=s, par=par: full[s].passed(par)
                want = {i: (t, kt) for i in range(nbox)}
                check(stage[s] == want, "wgmma of warpgroup", wg, "reads stage", s, stage[s],
                      "for", (t, kt))
                gl = groups[wg]
                g = next((g for g in gl if g["tag"] == (t, kt)), None)
                if g is None:
                    g = {"tag": (t, kt), "stage": s, "warps": set(), "done": False}
                    gl.append(g)
                    readers[s].add(id(g))
                g["warps"].add(w)
                mine.append(g)
                yield None
                if kt > 0 and not p["release_after_wait"]:  # lane 0 of each warp arrives
                    empty[prev if p["release_prev"] else s].arrive()
                    yield None
                depth = p["wait_depth"]
                yield lambda: all(x["done"] for x in mine[:max(len(mine) - depth, 0)])
                if kt > 0 and p["release_after_wait"]:
                    empty[prev if p["release_prev"] else s].arrive()
                    yield None
                prev = s
                s += 1
                if s == S:
                    s = 0
                    ph ^= p["cons_phase_flips"]
            yield lambda: all(x["done"] for x in mine)
            if p["tail_release"]:
                empty[prev].arrive()
                yield None
            for sub in range(p["BN"] // p["EPI_N"]):  # the epilogue
                buf = sub % p["epi_bufs"]
                check(not any(x[0] == wg and x[1] == buf and x[2] for x in stores),
                      "staging buffer", buf, "of warpgroup", wg, "written while a store reads it")
                bufs.setdefault((wg, buf), {})[w] = (t, sub)
                yield None
                if w == 0 and p["read_wait_before_barrier"]:
                    yield read_waited
                bid = ("wg%d" % wg) if p["barrier_per_wg"] else "shared"
                b = barriers.setdefault(bid, [0, 0])
                gen = b[1]
                b[0] += 1
                if b[0] == NW:
                    b[0], b[1] = 0, b[1] + 1
                yield lambda b=b, gen=gen: b[1] > gen
                if w == 0:
                    if not p["read_wait_before_barrier"]:
                        yield read_waited
                    got = bufs.get((wg, buf), {})
                    check(all(got.get(x) == (t, sub) for x in range(NW)), "store of warpgroup", wg,
                          "buffer", buf, "subtile", (t, sub), "before all warps wrote it:", got)
                    stores.append([wg, buf, True, False])
                    yield None
        if w == 0 and p["final_wait"]:
            yield lambda: all(x[3] for x in stores if x[0] == wg)

    agents = {"P": [producer(), None]}
    for wg in range(p["CONSUMERS"]):
        for w in range(NW):
            agents["C%d.%d" % (wg, w)] = [consumer(wg, w), None]
    steps = 0
    try:
        while True:
            steps += 1
            if steps > 200000:
                return "no end after 200000 steps"
            ready = [a for a, (gen, cond) in agents.items() if cond is None or cond()]
            events = []
            if loads:
                events.append("tma")
            for wg, gl in groups.items():
                live = [g for g in gl if not g["done"]]
                if live and len(live[0]["warps"]) == NW:
                    events.append(("mma", wg))
            if any(x[2] for x in stores):
                events.append("store-read")
            if any(not x[2] and not x[3] for x in stores):
                events.append("store-done")
            if not ready and not events:
                if agents:
                    return "deadlock: %s wait" % " ".join(sorted(agents))
                return None
            weights = [1.0] * len(ready) + [speed[e if isinstance(e, str) else e[0]]
                                            for e in events]
            choice = rnd.choices(ready + events, weights)[0]
            if choice == "tma":
                s, i, tag, b = loads.pop(rnd.randrange(len(loads)) if rnd.random() < 0.5 else 0)
                check(not readers[s], "a TMA load lands in stage", s, "while a wgmma reads it")
                stage[s][i] = tag  # the box's bytes only; the others keep what they held
                full[s].complete_tx(b)
            elif isinstance(choice, tuple):
                g = next(g for g in groups[choice[1]] if not g["done"])
                g["done"] = True
                readers[g["stage"]].discard(id(g))
            elif choice == "store-read":
                rnd.choice([x for x in stores if x[2]])[2] = False
            elif choice == "store-done":
                rnd.choice([x for x in stores if not x[2] and not x[3]])[3] = True
            else:
                a = agents[choice]
                try:
                    a[1] = next(a[0])
                except StopIteration:
                    del agents[choice]
                    if not agents:  # the CTA exits: its shared memory goes away
                        check(not loads, "exit with TMA loads in flight")
                        check(all(x[3] for x in stores), "exit while a TMA store still reads")
    except Bug as e:
        return str(e)


def sweep(p, seeds, stop_at_first):
    n = bad = 0
    first = None
    for lay in ("TN", "NN", "NT"):
        for KT in (1, 2, 3, 5, 9):
            for tiles in (1, 2, 3):
                for seed in range(seeds):
                    r = run(p, lay, tiles, KT, seed * 7919 + KT * 31 + tiles)
                    n += 1
                    if r is not None:
                        bad += 1
                        first = first or "%s KT %d tiles %d seed %d: %s" % (lay, KT, tiles, seed, r)
                        if stop_at_first:
                            return n, bad, first
    return n, bad, first


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    path = argv[1] if len(argv) > 1 else os.path.join(
        os.environ.get("GS_SRCDIR", os.path.join(here, "..")), "kernels",
        "gemm_bf16_wgmma_persistent.cu")
    try:
        src = open(path).read()
        p = protocol(src)
    except (OSError, SourceError) as e:
        print("FAIL: %s" % e)
        return 2
    print("kernel: %d stages, full[] %d arrival + %d bytes, empty[] %d arrivals, wgmma_wait<%d>, "
          "%d staging buffers, store read-wait<%d>" %
          (p["STAGES"], p["full_count"], p["expect_bytes"], p["empty_count"], p["wait_depth"],
           p["epi_bufs"], p["read_wait_depth"]))
    n, bad, first = sweep(p, seeds=6, stop_at_first=False)
    print("protocol model: %d runs, %d bad%s" % (n, bad, ", first: " + first if first else ""))
    fails = bad != 0
    for line in MUTATIONS.strip().split("\n"):
        name, pat, rep = line.split("|")
        msrc, k = re.subn(pat, rep, src, count=1)
        if k == 0:
            print("FAIL: mutation '%s' matched nothing in the kernel" % name)
            fails = True
            continue
        try:
            mp = protocol(msrc)
        except SourceError as e:
            print("FAIL: mutation '%s' made the source unreadable: %s" % (name, e))
            fails = True
            continue
        n, bad, first = sweep(mp, seeds=6, stop_at_first=True)
        if bad:
            print("caught: %-38s (run %d: %s)" % (name, n, first[:110]))
        else:
            print("FAIL: mutation '%s' not caught in %d runs" % (name, n))
            fails = True
    print("FAILED" if fails else "ok: the protocol holds and every mutation is caught")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
