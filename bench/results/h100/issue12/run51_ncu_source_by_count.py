"""Issue 12 run 51: Nsight Compute's stall samples of two kernels (its --page source --csv output),
summed by how many times each instruction ran (an instruction run once per unit per consumer warp
ran units x 8 times), and the instructions of one such count with 6 samples or more.
Usage: python3 run51_ncu_source_by_count.py PLAIN.csv.gz MASKED.csv.gz [COUNT]"""
import collections, csv, gzip, io, sys


def load(path):
    lines = gzip.open(path, 'rt').read().splitlines()
    first = [i for i, line in enumerate(lines) if line.startswith('"Address"')][0]
    return list(csv.DictReader(io.StringIO("\n".join(lines[first:]))))


kernels = {'plain': load(sys.argv[1]), 'masked': load(sys.argv[2])}
by_count = {}
for name, rows in kernels.items():
    counts = collections.defaultdict(lambda: [0, 0])
    for r in rows:
        counts[int(r['Instructions Executed'])][0] += int(r['Warp Stall Sampling (All Samples)'])
        counts[int(r['Instructions Executed'])][1] += 1
    by_count[name] = counts
    print(name, 'samples', sum(c[0] for c in counts.values()))
keys = sorted(set(by_count['plain']) | set(by_count['masked']),
              key=lambda k: -(by_count['plain'].get(k, [0])[0] + by_count['masked'].get(k, [0])[0]))
for k in keys[:12]:
    p, m = by_count['plain'].get(k, [0, 0]), by_count['masked'].get(k, [0, 0])
    print('  ran %7d times: plain %5d samples (%4d instructions), masked %5d (%4d), difference %+d' %
          (k, p[0], p[1], m[0], m[1], m[0] - p[0]))
if len(sys.argv) > 3:
    for name, rows in kernels.items():
        print('==', name, 'instructions that ran', sys.argv[3], 'times, 6 samples or more')
        for i, r in enumerate(rows):
            samples = int(r['Warp Stall Sampling (All Samples)'])
            if r['Instructions Executed'] == sys.argv[3] and samples >= 6:
                stalls = {k[6:]: int(r[k]) for k in r if k.startswith('stall_') and 'Not Issued' not in k and int(r[k] or 0) > 0}
                top = dict(sorted(stalls.items(), key=lambda x: -x[1])[:3])
                print('%6d %5d  %-60s %s' % (i, samples, r['Source'].strip()[:60], top))
