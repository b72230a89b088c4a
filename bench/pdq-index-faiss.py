# The peer of bench/pdq-index.bench.ts: faiss's IndexBinaryMultiHash (what Meta's
# Hasher-Matcher-Actioner uses for PDQ) over the same hashes, with 16 tables of 16 bits
# and nflip 1 (the exact setting for distance <= 31). Reads the stored hashes and the
# queries as raw 32-byte codes, range-searches each query alone (distance < 32) and
# prints one JSON object: load time, bytes per stored hash (resident memory the index
# added), and per query its CPU time and result ids.
#   /usr/bin/python3 bench/pdq-index-faiss.py STORED.bin QUERIES.bin
import json, os, sys, time
import numpy as np
import faiss

def rss():
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) * 1024
    return 0

faiss.omp_set_num_threads(1)
stored = np.fromfile(sys.argv[1], dtype=np.uint8).reshape(-1, 32)
queries = np.fromfile(sys.argv[2], dtype=np.uint8).reshape(-1, 32)
before = rss()
t0 = time.process_time()
index = faiss.IndexBinaryMultiHash(256, 16, 16)
index.nflip = 1
index.add(stored)
load = time.process_time() - t0
added = rss() - before
times = []
results = []
for i in range(len(queries)):
    q = queries[i:i + 1]
    c0 = time.process_time_ns()
    lims, dist, ids = index.range_search(q, 32)
    times.append((time.process_time_ns() - c0) / 1e6)
    results.append(sorted(int(x) for x in ids))
print(json.dumps({'load_s': load, 'bytes_per_fp': added / len(stored), 'ms': times, 'ids': results}))
