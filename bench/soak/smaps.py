"""Where a process's anonymous resident memory is, from /proc/PID/smaps, in KiB.

  gc      the .NET GC's reservation (regions): the run of adjacent mappings that holds one
          reservation of 1 GiB or more, and the GC's bookkeeping mapped beside it, less any
          arena or stack that happens to lie in that run
  malloc  glibc's heaps: [heap] (the main arena) and the other arenas' 64 MiB-aligned heaps
          (a read-write part followed by an inaccessible rest, 64 MiB in all)
  stacks  thread stacks: the mapping that holds a thread's stack pointer (from
          /proc/PID/task/*/syscall, for a thread blocked in a system call), or, outside the
          GC's run, a read-write mapping just above a guard page of 4 KiB (a stack glibc keeps
          for the next thread)
  other   every other anonymous mapping (the runtime's own, the AOT image's data, mmap'd
          blocks of malloc over its mmap threshold)

The layout rules are glibc's (arena.c: HEAP_MAX_SIZE, allocatestack.c: the guard) and the
GC's (one reservation for all regions); a mapping that fits none is counted as other.
"""
import os, re

_HEAP = 64 << 20


def _stack_pointers(pid):
    sps = []
    for tid in os.listdir(f'/proc/{pid}/task'):
        try:
            fields = open(f'/proc/{pid}/task/{tid}/syscall').read().split()
        except OSError:
            continue
        if len(fields) >= 9:  # "nr arg1..arg6 sp pc"; "running" for a thread on a CPU
            sps.append(int(fields[7], 16))
    return sps


def breakdown(pid):
    maps = []  # [start, end, perms, name, rss, anon]
    cur = None
    with open(f'/proc/{pid}/smaps') as f:
        for line in f:
            m = re.match(r'([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ (\S+)\s*(.*)', line)
            if m:
                cur = [int(m[1], 16), int(m[2], 16), m[3], m[5].strip(), 0, 0]
                maps.append(cur)
            elif line.startswith('Rss:'):
                cur[4] = int(line.split()[1])
            elif line.startswith('Anonymous:'):
                cur[5] = int(line.split()[1])
    out = {'gc': 0, 'malloc': 0, 'stacks': 0, 'other': 0}
    sps = _stack_pointers(pid)
    # Runs of adjacent anonymous mappings; the one with a reservation of 1 GiB or more is the GC's.
    runs, run = [], []
    for m in maps:
        if m[3] and not m[3] == '[heap]':
            out['other'] += m[5]  # pages written in a file's private mapping ([stack] too)
            if run: runs.append(run); run = []
            continue
        if run and run[-1][1] != m[0]:
            runs.append(run); run = []
        run.append(m)
    if run: runs.append(run)
    for run in runs:
        gc = any(m[1] - m[0] >= 1 << 30 and m[2].startswith('---') for m in run)
        for i, m in enumerate(run):
            prev = run[i - 1] if i else None
            nxt = run[i + 1] if i + 1 < len(run) else None
            if m[3] == '[heap]':
                kind = 'malloc'
            elif (m[2].startswith('rw') and m[0] % _HEAP == 0 and
                  (m[1] - m[0] == _HEAP or (nxt and nxt[2].startswith('---') and nxt[1] - m[0] == _HEAP))):
                kind = 'malloc'
            elif any(m[0] <= sp < m[1] for sp in sps) or (
                    not gc and m[2].startswith('rw') and m[1] - m[0] >= 64 << 10 and
                    prev and prev[2].startswith('---') and prev[1] - prev[0] == 4096):
                kind = 'stacks'
            else:
                kind = 'gc' if gc else 'other'
            out[kind] += m[5]
    return out


if __name__ == '__main__':
    import sys
    print(breakdown(int(sys.argv[1])))
