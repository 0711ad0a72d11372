"""The x86 evaluation's pgbench rows at full size, merged into a full reproduction's JSON.

Runs only the pgbench experiments of x86-freq-invariance (every machine, full size) into DB
and writes BASE.json with its pgbench rows replaced by these: the other benchmarks' runs
have no warm-up, so their keys (engine and inputs) and figures are those of the same engine
without this branch's change (the regression cases and the five evaluations check that).
Used in session 20 when the shared host could not finish a whole full-size reproduction in
the session; the lead's full run of the merged tree is the record.

    .venv/bin/python tools/warmup/pgbench_full.py BASE.json DB OUT.json [JOBS] [--quick]
"""

import json
import sys

from govlab import fmt, pipeline, reproduction
from govlab.store import Store


def main():
    args = [a for a in sys.argv[1:] if a != "--quick"]
    base_path, db, out_path = args[:3]
    jobs = int(args[3]) if len(args) > 3 else 2
    ev = reproduction.evaluation("x86-freq-invariance")
    quick = "--quick" in sys.argv
    exps = [e for e in reproduction.experiments_of(ev, quick=quick) if "/pgbench" in e.name]
    with Store(db) as store:
        done = pipeline.run_experiments(exps, store, jobs=jobs, progress=False)
        table = fmt.finite(reproduction.rows(ev, done.experiments, done.planned, done.results(store)))
    with open(base_path) as f:
        data = json.load(f)
    docs = data if isinstance(data, list) else [data]
    (doc,) = [d for d in docs if d.get("experiment") == ev.name]
    kept = [r for r in doc["rows"] if "/pgbench" not in r["benchmark"]]
    doc["rows"] = kept + table
    with open(out_path, "w") as f:
        json.dump(data, f)
    print(f"{len(table)} pgbench rows, {len(kept)} others kept", file=sys.stderr)


main()
