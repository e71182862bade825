#!/usr/bin/env python3
"""Times `fmperf validate` on a generated file of distinct measured runs (issue 29 §6, issue 30).

The file is generated here, never stored: each shipped row of
crates/core/data/measured-training-runs.json is restated in variants that scale its device
count (and data-parallel degree) by 1, 2, 4 or 8 and its global batch by 1-5 more, so every
variant prices differently (another micro-batch count, another data-parallel group). Intensive
measured figures (TFLOP/s per device, MFU) are kept; extensive ones (tokens/s in all, step time)
are scaled with the configuration. Variants of a run are spread over `--sources` sources.

    scripts/validate-scale.py [--rows 2000] [--sources 50] [--by-row] [--bin PATH] [--keep FILE]

`--by-row` puts row i (every row, the first restatements included) in group i % sources, so
`--rows 1000 --sources 1000 --by-row` is 1,000 rows of 1,000 distinct sources.

Prints the rows written and the CPU seconds (user + system) of each `fmperf validate` run:
the generated file, then builtin, builtin-moe and builtin-memory.
"""
import argparse, copy, json, os, resource, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def variants(rows, n, sources, by_row=False):
    out = []
    j = 0
    while len(out) < n:
        f_b = 1 + j % 5
        f_d = 2 ** ((j // 5) % 4)
        for r in rows:
            if len(out) >= n:
                break
            v = copy.deepcopy(r)
            v["id"] = f"{r['id']}_v{j}"
            if sources > 0 and by_row:
                v["source"]["title"] = f"{r['source']['title']} (variant group {len(out) % sources})"
            elif sources > 0 and j > 0:
                v["source"]["title"] = f"{r['source']['title']} (variant group {j % sources})"
            v["num_devices"] = r["num_devices"] * f_d
            par = v["parallel"]
            if par.get("dp") is not None:
                par["dp"] = par["dp"] * f_d
            b = v["batch"]
            for k in ("global_batch_seqs", "global_batch_tokens"):
                if b.get(k) is not None:
                    b[k] = b[k] * f_b * f_d
            if b.get("grad_accum") is not None:
                b["grad_accum"] = b["grad_accum"] * f_b
            m = v["measured"]
            for k in ("tokens_per_s_total", "samples_per_s"):
                if m.get(k) is not None:
                    m[k] = m[k] * f_d
            if m.get("step_time_s") is not None:
                m["step_time_s"] = m["step_time_s"] * f_b
            out.append(v)
        j += 1
    return out


def cpu_of(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--sources", type=int, default=50)
    ap.add_argument("--by-row", action="store_true", help="row i in source group i %% sources")
    ap.add_argument("--bin", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "host", "fmperf"))
    ap.add_argument("--keep", help="also write the generated file here")
    ap.add_argument("--only-file", action="store_true", help="skip the builtin data sets")
    a = ap.parse_args()
    data = json.load(open(os.path.join(ROOT, "crates/core/data/measured-training-runs.json")))
    data["rows"] = variants(data["rows"], a.rows, a.sources, a.by_row)
    with tempfile.TemporaryDirectory() as d:
        path = a.keep or os.path.join(d, "runs.json")
        json.dump(data, open(path, "w"))
        print(f"{len(data['rows'])} rows written to {path}")
        inputs = [path] + ([] if a.only_file else ["builtin", "builtin-moe", "builtin-memory"])
        for inp in inputs:
            p, cpu = cpu_of([a.bin, "validate", "--data", inp, "--format", "json"])
            last = [l for l in p.stderr.splitlines() if l.strip()][-1:] 
            print(f"{inp if inp != path else 'generated'}: exit {p.returncode}, {cpu:.2f} s CPU, {len(p.stdout)} bytes"
                  + (f", last stderr: {last[0][:160]}" if last else ""))
            if p.returncode != 0:
                sys.stderr.write(p.stderr[-2000:])


if __name__ == "__main__":
    main()
