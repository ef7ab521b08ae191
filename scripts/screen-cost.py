#!/usr/bin/env python3
# What the status screen costs: python3 scripts/screen-cost.py FUZZER SEEDS SECONDS TRIALS
# Side by side on one target: a campaign drawing the status screen (stdout a pty) and one
# printing status lines (--no-tui, stdout a file), each client pinned to its own core, cores
# swapped every trial; same binary, seeds and --seed. Prints execs per trial and the ratio.
import tempfile, os, pty, subprocess, sys, time, shutil, statistics, select
fuzzer, seeds, secs, trials = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
ratios = []
scratch = tempfile.mkdtemp(prefix="lafuzz-screen-cost-")
def stats(out):
    d = {}
    for l in open(os.path.join(out, "fuzzer_stats")):
        k, _, v = l.partition(":")
        d[k.strip()] = v.strip()
    return d
for t in range(1, trials + 1):
    cs, cl = (0, 1) if t % 2 else (1, 0)
    for d in (os.path.join(scratch, "screen"), os.path.join(scratch, "lines")):
        shutil.rmtree(d, ignore_errors=True)
    args = lambda out, core: [fuzzer, "fuzz", "-i", seeds, "-o", out, "--cores", str(core),
                              "--max-time", str(secs), "--seed", str(t)]
    pid, fd = pty.fork()
    if pid == 0:
        import fcntl, termios, struct
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        os.execv(fuzzer, args(os.path.join(scratch, "screen"), cs))
    lines = subprocess.Popen(args(os.path.join(scratch, "lines"), cl) + ["--no-tui"], stdout=open(os.path.join(scratch, "lines.log"), "w"),
                             stderr=subprocess.STDOUT, start_new_session=True)
    drawn = 0
    while True:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            drawn += len(data)
    os.waitpid(pid, 0)
    lines.wait()
    s, l = stats(os.path.join(scratch, "screen")), stats(os.path.join(scratch, "lines"))
    ratio = int(s["execs_done"]) / int(l["execs_done"])
    ratios.append(ratio)
    print(f"trial {t}: screen core {cs} execs {s['execs_done']} edges {s['edges_found']} ({drawn} bytes drawn) | lines core {cl} execs {l['execs_done']} edges {l['edges_found']} | {ratio:.3f}x", flush=True)
print(f"median screen/lines execs: {statistics.median(ratios):.3f}x over {trials} trials")
shutil.rmtree(scratch, ignore_errors=True)
